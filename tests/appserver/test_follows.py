"""Following a thread again while a follow is still being set up: two follows asked for at
once leave one (live events arrive once), and an unsubscribe sent right after a subscribe
wins (nothing more arrives); a connection closed meanwhile leaves no follower behind."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from host.appserver.connection import Connection
from host.appserver.server import AppServer
from host.disposal import Disposer
from host.testing import HostHarness
from tests.appserver.client import TIMEOUT, Client
from tests.appserver.test_threads import of_thread, text
from tests.support import Gate


def started_thread(client: Client) -> str:
    """A thread with one finished turn, followed by ``client``."""
    client.initialize()
    thread_id = client.call("thread/start")["thread"]["id"]
    client.call("turn/start", {"threadId": thread_id, "input": text("one")})
    client.notification("turn/completed")
    return str(thread_id)


def test_two_follows_asked_for_at_once_leave_one(clients) -> None:
    client = clients(script={"user": ["First.", "Second."]})
    thread_id = started_thread(client)
    subscribe = ("thread/subscribe", {"threadId": thread_id, "afterSeq": 0})
    for request_id in client.begin_at_once(subscribe, subscribe):
        assert "result" in client.response(request_id)
    mark = len(client.seen)
    client.call("turn/start", {"threadId": thread_id, "input": text("two")})
    client.notification("turn/completed")
    client.call("models/list")  # every follower's copy of the turn is written before this
    methods = [m["method"] for m in of_thread(client, thread_id, mark)]
    assert methods.count("turn/started") == 1
    assert methods.count("turn/completed") == 1


def test_an_unsubscribe_right_after_a_subscribe_stops_the_follow(clients) -> None:
    client = clients(script={"user": ["First.", "Second."]})
    thread_id = started_thread(client)
    asked = client.begin_at_once(
        ("thread/subscribe", {"threadId": thread_id, "afterSeq": 0}),
        ("thread/unsubscribe", {"threadId": thread_id}),
    )
    for request_id in asked:
        assert "result" in client.response(request_id)
    mark = len(client.seen)
    client.call("turn/start", {"threadId": thread_id, "input": text("two")})
    deadline = time.monotonic() + TIMEOUT
    while not any(
        item.get("text") == "Second."
        for item in client.call("thread/read", {"threadId": thread_id})["items"]
    ):
        assert time.monotonic() < deadline, "the second turn did not end"
        time.sleep(0.05)
    client.call("models/list")  # whatever the turn notified is written before this
    assert of_thread(client, thread_id, mark) == []


async def test_a_connection_closed_while_a_follow_is_set_up_leaves_no_follower(
    harness: HostHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = await harness.root("user")
    server = AppServer(harness.host)
    connection = Connection(server)
    connection.state = "ready"
    gate = Gate()
    follow = server.feed.follow

    async def held(*args: Any, **kwargs: Any) -> Disposer:
        await gate.hold()
        return await follow(*args, **kwargs)

    monkeypatch.setattr(server.feed, "follow", held)
    following = asyncio.ensure_future(server._follow(connection, root.id, 0))
    await gate.entered.wait()
    connection.close()
    gate.open()
    await following
    assert connection.follows == {}
    assert server.feed.tree(root.id) is None  # nobody follows the thread any more
    server.close()
