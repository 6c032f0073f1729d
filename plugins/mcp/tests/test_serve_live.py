"""What ``agent-host mcp serve`` tells a client while subagents work: a cancelled foreground
call interrupts its child's turn; transcripts are resources whose list and contents notify."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest


def interrupted_children(data: Path) -> list[str]:
    """The subagent logs in ``data`` whose last turn ended interrupted."""
    return [
        path.stem
        for path in data.glob("sub_*.jsonl")
        if '"kind":"turn/end"' in path.read_text()
        and '"stop_reason":"interrupted"' in path.read_text().splitlines()[-1]
    ]


async def test_cancelling_a_foreground_call_interrupts_the_childs_turn(serve) -> None:
    script = {"research": [{"tool_calls": [{"name": "list_agents", "arguments": {}}]}, "Never."]}
    asked = anyio.Event()

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.set()  # the child now waits on the user: its turn is under way
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    scopes: list[anyio.CancelScope] = []
    policy = '[approvals]\nask = ["list_agents"]\n'
    async with serve.project(script, policy).stdio(elicit=elicit) as session:

        async def call() -> None:
            with anyio.CancelScope() as scope:
                scopes.append(scope)
                arguments = {"description": "research", "prompt": "Go.", "run_in_background": False}
                await session.call_tool("subagent", arguments)

        async with anyio.create_task_group() as group:
            group.start_soon(call)
            with anyio.fail_after(60):
                await asked.wait()
            scopes[0].cancel()
        deadline = time.monotonic() + 60
        while not interrupted_children(serve.path / "data") and time.monotonic() < deadline:
            await anyio.sleep(0.1)
        assert len(interrupted_children(serve.path / "data")) == 1  # while the server runs


@pytest.mark.filterwarnings("ignore:resources/subscribe is removed")  # clients still use it
async def test_transcripts_notify_when_subagents_start_settle_and_grow(serve, settle) -> None:
    heard: list[Any] = []

    async def hear(message: Any) -> None:
        heard.append(message)

    script = {"research": ["First.", "Second."]}
    async with serve.project(script).stdio(heard=hear) as session:
        started = await session.call_tool("subagent", {"description": "research", "prompt": "Go."})
        child_id = started.structured_content["subagent_id"]
        _messages, after = await settle(session)
        uri = f"agent://{child_id}/transcript"
        await session.subscribe_resource(uri)
        await session.call_tool("send_message", {"subagent_id": child_id, "message": "More."})
        await settle(session, after)
        listed = (await session.list_resources()).resources
    kinds = [type(message).__name__ for message in heard]
    assert kinds.count("ResourceListChangedNotification") >= 2  # started, settled
    updated = [m.params.uri for m in heard if isinstance(m, types.ResourceUpdatedNotification)]
    assert updated
    assert set(updated) == {uri}
    assert [(r.uri, r.name, r.mime_type) for r in listed] == [(uri, "research", "application/json")]
