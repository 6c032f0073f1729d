"""Requests to the user through the app-server: one thread's unanswered request never holds up
another thread's, and a request the service stops waiting for is withdrawn from the client."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from host.approvals.requests import ApprovalRequest
from host.appserver.asking import Asker
from host.appserver.connection import Connection
from host.appserver.protocol import Capabilities
from host.sessions.model import ApprovalOrigin

LIST_AGENTS = {"tool_calls": [{"name": "list_agents", "arguments": {}}]}
TWO_ROOTS_SCRIPT = {"a": [LIST_AGENTS, "A listed."], "b": [LIST_AGENTS, "B listed."]}
"""Two roots, ``a`` and ``b``, each calling a tool the policy asks about."""


def test_two_threads_waiting_are_both_asked_before_either_is_answered(clients) -> None:
    client = clients(script=TWO_ROOTS_SCRIPT)
    client.initialize(approvals=True)
    threads = []
    for label in ("a", "b"):
        thread_id = client.call("thread/start", {"label": label})["thread"]["id"]
        text = [{"type": "text", "text": "go"}]
        client.call("turn/start", {"threadId": thread_id, "input": text})
        threads.append(thread_id)
    asked = [m for m in client.seen if m.get("method") == "approval/request"]
    while len(asked) < 2:
        asked.append(client.expect(lambda m: m.get("method") == "approval/request"))
    assert sorted(m["params"]["threadId"] for m in asked) == sorted(threads)
    for request in reversed(asked):  # the later one first: neither waits for the other
        client.reply(request, {"decision": "approve"})
        client.notification("turn/completed", threadId=request["params"]["threadId"])
    assert client.close()[0] == 0


class _Server:
    """What a connection needs of its server here: nothing but being told it left."""

    def gone(self, connection: Connection) -> None:
        """Nothing to forget."""


async def test_a_request_the_service_gives_up_on_leaves_nothing_open() -> None:
    connection = Connection(_Server())  # type: ignore[arg-type]
    connection.state = "ready"
    connection.capabilities = Capabilities(approvals=True)
    connection.follows["agent_root"] = lambda: None
    asker = Asker({connection})
    origin = ApprovalOrigin("agent_root", "agent_root", 0, "user")
    request = ApprovalRequest("apr_1", "list_agents", {}, "call_1", origin, "agent_root")
    asking = asyncio.get_running_loop().create_task(asker(request))
    (text,) = await asyncio.wait_for(connection.take(), 10)
    sent: Any = json.loads(text or "null")
    assert sent["method"] == "approval/request"
    asking.cancel()  # what the service does on a timeout or an interrupt
    await asyncio.gather(asking, return_exceptions=True)
    for _ in range(3):
        await asyncio.sleep(0)
    assert connection._asked == {}
    assert asker._open == {}
