"""``agent-host app-server`` over stdio: a turn named when it is asked for, every item started
before it completes, labels kept in the stored log, and following again — the subagent tree
stated to a client that comes back, a second follow that replays what it asks for."""

from __future__ import annotations

from typing import Any

from tests.appserver.client import Client, text
from tests.appserver.test_bad_input import error_of
from tests.appserver.test_stdio import tree_client


def of_thread(client: Client, thread_id: str, since: int = 0) -> list[dict[str, Any]]:
    """The notifications about ``thread_id`` seen after ``since`` messages."""
    return [
        m for m in client.seen[since:]
        if "id" not in m and "method" in m and m["params"].get("threadId") == thread_id
    ]


def test_turn_start_names_the_turn_that_takes_the_message(clients) -> None:
    client = clients(script={"user": ["First.", "Second."]})
    client.initialize()
    thread_id = client.call("thread/start")["thread"]["id"]
    first = client.call("turn/start", {"threadId": thread_id, "input": text("one")})
    second = client.call("turn/start", {"threadId": thread_id, "input": text("two")})
    client.notification("turn/completed", turnId=second["turn"]["id"])
    started = [n["params"]["turnId"] for n in client.notifications("turn/started")]
    assert started == [first["turn"]["id"], second["turn"]["id"]]
    said = {
        n["params"]["item"]["text"]: n["params"]["turnId"]
        for n in client.notifications("item/completed")
        if n["params"]["item"]["type"] == "userMessage"
    }
    assert said == {"one": first["turn"]["id"], "two": second["turn"]["id"]}
    assert first["messageId"] != second["messageId"]


def test_every_item_is_started_just_before_it_completes(clients) -> None:
    client, thread_id = tree_client(clients)
    heard = of_thread(client, thread_id)
    completed = [i for i, m in enumerate(heard) if m["method"] == "item/completed"]
    types = set()
    for index in completed:
        done = heard[index]["params"]
        types.add(done["item"]["type"])
        if done["streamId"] is not None:  # started by its first delta, before it was stored
            first = next(m for m in heard if m["method"] == "item/started"
                         and m["params"]["item"]["id"] == done["streamId"])
            assert heard.index(first) < index and first["params"]["seq"] is None
            continue
        started = heard[index - 1]
        assert started["method"] == "item/started"
        assert started["params"]["item"] == done["item"]
        assert started["params"]["seq"] == done["seq"]
    assert {"userMessage", "agentMessage", "toolCall", "toolResult", "subagentSettled"} <= types


def test_a_label_is_stored_and_listed_after_a_restart(clients) -> None:
    first = clients(script={"alice": ["Hello."]})
    first.initialize()
    started = first.call("thread/start", {"label": "alice"})["thread"]
    first.call("turn/start", {"threadId": started["id"], "input": text("hi")})
    first.notification("turn/completed")
    unlabelled = first.call("thread/start")["thread"]
    listed = first.call("thread/list")["threads"]
    assert [(t["id"], t["label"]) for t in listed] == [
        (unlabelled["id"], "user"), (started["id"], "alice")
    ]
    assert first.close()[0] == 0
    second = clients(script={"alice": ["Again."]})
    second.initialize()
    stored = [{**t, "live": False} for t in listed]
    assert second.call("thread/list")["threads"] == stored  # read from the stored headers
    resumed = second.call("thread/resume", {"threadId": started["id"]})["thread"]
    assert resumed["label"] == "alice"
    second.call("turn/start", {"threadId": started["id"], "input": text("more")})
    done = second.notification("item/completed", type="agentMessage")
    assert done["params"]["item"]["text"] == "Again."  # the script's entries for its label


def test_a_client_that_follows_again_is_told_the_subagent_tree_as_it_is(clients) -> None:
    client, thread_id = tree_client(clients)
    places = {
        n["params"]["subagentId"]: (n["params"]["parentId"], n["params"]["label"],
                                    n["params"]["depth"])
        for n in client.notifications("subagent/started")
    }
    read = client.call("thread/read", {"threadId": thread_id})
    client.call("thread/unsubscribe", {"threadId": thread_id})
    mark = len(client.seen)
    client.call("thread/subscribe", {"threadId": thread_id, "afterSeq": read["lastSeq"]})
    again = of_thread(client, thread_id, mark)
    assert [m["method"] for m in again if m["method"].startswith("item/")] == []  # no gap
    told = [m["params"] for m in again if m["method"] == "subagent/started"]
    assert {t["subagentId"]: (t["parentId"], t["label"], t["depth"]) for t in told} == places
    assert len(told) == len(places)  # each once
    now = {m["params"]["subagentId"]: m["params"]["status"]
           for m in again if m["method"] == "subagent/status"}
    assert now == dict.fromkeys(places, "settled")  # both are done: neither is live any more


def test_following_again_with_a_seq_replays_after_it(clients) -> None:
    client, thread_id = tree_client(clients)
    read = client.call("thread/read", {"threadId": thread_id})
    middle = read["items"][len(read["items"]) // 2]["seq"]
    mark = len(client.seen)
    client.call("thread/subscribe", {"threadId": thread_id, "afterSeq": middle})  # still following
    replayed = [
        m["params"]["item"] for m in of_thread(client, thread_id, mark)
        if m["method"] == "item/completed"
    ]
    assert replayed == [item for item in read["items"] if item["seq"] > middle]
    client.call("turn/start", {"threadId": thread_id, "input": text("more")})
    client.notification("turn/completed")
    started = [
        m for m in of_thread(client, thread_id, mark)
        if m["method"] == "turn/started" and m["params"]["seq"] > read["lastSeq"]
    ]
    assert len(started) == 1  # live events once: the first follow was replaced, not doubled


def test_threads_are_listed_by_last_activity_live_or_stored_and_paged(clients) -> None:
    first = clients(script={"user": ["One.", "Two."]})
    first.initialize()
    a, b, c = (first.call("thread/start")["thread"]["id"] for _ in range(3))
    first.call("turn/start", {"threadId": a, "input": text("later")})
    first.notification("turn/completed")
    listed = first.call("thread/list")["threads"]
    assert [t["id"] for t in listed] == [a, c, b]  # the one active last first
    assert [t["live"] for t in listed] == [True, True, True]
    assert listed[0]["lastActivity"] > listed[0]["createdAt"]
    assert listed[1]["lastActivity"] >= listed[2]["lastActivity"]
    assert first.close()[0] == 0
    second = clients(script={"user": ["Three."]})
    second.initialize()
    page = second.call("thread/list", {"limit": 1})
    assert [(t["id"], t["live"]) for t in page["threads"]] == [(a, False)]
    second.call("thread/resume", {"threadId": b})
    second.call("turn/start", {"threadId": b, "input": text("meanwhile")})  # b moves up…
    second.notification("turn/completed")
    rest = second.call("thread/list", {"cursor": page["nextCursor"], "limit": 5})
    assert [(t["id"], t["live"]) for t in rest["threads"]] == [(c, False)]  # …past the cursor
    assert rest["nextCursor"] is None
    listed = second.call("thread/list")["threads"]
    assert [(t["id"], t["live"]) for t in listed] == [(b, True), (a, False), (c, False)]
    assert error_of(second, "thread/list", {"cursor": "7"})[1:] == (
        "INVALID_CURSOR", "invalid cursor '7'"
    )


def test_resume_says_whether_a_turn_runs(clients) -> None:
    client = clients(script={"user": [{"tool_calls": [{"name": "list_agents",
                                                         "arguments": {}}]}, "Listed."]})
    client.answer = lambda request: None  # asked, never answers: the turn waits on the user
    client.initialize(approvals=True)
    started = client.call("thread/start")
    assert started["running"] is False
    thread_id = started["thread"]["id"]
    client.call("turn/start", {"threadId": thread_id, "input": text("go")})
    client.asked()
    assert client.call("thread/resume", {"threadId": thread_id})["running"] is True
    idle = client.call("thread/start")["thread"]["id"]
    assert client.call("thread/resume", {"threadId": idle})["running"] is False
