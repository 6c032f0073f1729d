"""``interrupt_agent`` on a stored descendant a restart left waiting on the user, called by
any live ancestor: its open requests are recorded ``cancelled`` in its log and the root's
before the tool answers; a log another process holds is the tool's error, nothing recorded.

The restart is simulated as in ``tests.approvals.test_resume`` (a copy of the data directory
while the first host waits)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from host.agents import call, say
from host.agents.tool_results import INTERRUPTED_TOOL_TEXT
from host.approvals.requests import ApprovalRequest
from host.clients.commands import Commands
from host.sessions.jsonl import JsonlPersistence
from host.sessions.model import ApprovalDecided, TurnEnd
from host.testing import HostHarness, MakeHarness
from tests.approvals.test_resume import blocked_child, crash_copy, harness
from tests.approvals.test_service import RAN, Asker, service, tree
from tests.support import bodies, soon, tool_messages


async def after_a_kill(
    make_harness: MakeHarness, tmp_path: Path
) -> tuple[HostHarness, Any, Any, ApprovalRequest]:
    """A root resumed after a kill left its stored child waiting for approval: host, root,
    child (stored, not resumed), request."""
    first, root, child, request = await blocked_child(make_harness, tmp_path, "x")
    second = harness(make_harness, await crash_copy(first, tmp_path))
    return second, await second.agents.resume(root.id, label="root"), child, request


async def test_interrupting_a_stored_child_that_waits_on_the_user_cancels_its_request(
    make_harness: MakeHarness, tmp_path: Path
) -> None:
    second, resumed, child, request = await after_a_kill(make_harness, tmp_path)
    never = Asker()
    service(second).on_request(never)
    assert service(second).waiting(resumed) == {child.id}  # listed as waiting on the user
    interrupted = await second.call("interrupt_agent", {"agent_id": child.id}, resumed)
    assert interrupted.text == f"interrupt requested for agent {child.id}"
    cancelled = ApprovalDecided(request.request_id, "cancelled", "the call was interrupted")
    assert bodies(resumed, ApprovalDecided) == [cancelled]
    assert service(second).waiting(resumed) == set()
    stored = (await JsonlPersistence(second.data_dir).inspect(child.id)).events
    assert [e.body for e in stored if e.kind == "approval/decided"] == [cancelled]
    assert [e.body.stop_reason for e in stored if isinstance(e.body, TurnEnd)] == ["interrupted"]
    new_child = await second.agents.resume(child.id, label="level 1")
    await new_child.wait_idle()
    assert never.asked == [] and RAN == []
    assert [m.content for m in tool_messages(new_child)] == [INTERRUPTED_TOOL_TEXT]


async def test_interrupting_a_stored_waiting_child_another_process_holds_records_nothing(
    make_harness: MakeHarness, tmp_path: Path
) -> None:
    second, resumed, child, _request = await after_a_kill(make_harness, tmp_path)
    held = await JsonlPersistence(second.data_dir).resume(child.id)  # as another process would
    try:
        refused = await second.call("interrupt_agent", {"agent_id": child.id}, resumed)
    finally:
        held.writer.close()
    locked = f'subagent "{child.id}" is in use by another host'
    assert (refused.text, refused.is_error) == (locked, True)
    assert bodies(resumed, ApprovalDecided) == [] and service(second).waiting(resumed) == {child.id}


async def test_a_front_ends_interrupt_of_a_stored_waiting_child_is_recorded_when_it_returns(
    make_harness: MakeHarness, tmp_path: Path
) -> None:
    second, resumed, child, request = await after_a_kill(make_harness, tmp_path)
    await Commands(second.host).interrupt_subagent(resumed.id, child.id)  # /interrupt, the app-server
    cancelled = ApprovalDecided(request.request_id, "cancelled", "the call was interrupted")
    assert bodies(resumed, ApprovalDecided) == [cancelled]
    stored = (await JsonlPersistence(second.data_dir).inspect(child.id)).events
    assert [e.body for e in stored if e.kind == "approval/decided"] == [cancelled]


async def test_a_parent_interrupting_its_stored_child_that_waits_cancels_it_before_answering(
    make_harness: MakeHarness, tmp_path: Path
) -> None:
    RAN.clear()
    first = harness(make_harness, tmp_path / "data")
    root, _, grandchild = await tree(first, 2)
    first.model.script("level 2", call("shell", cmd="rm x"), say("never"))
    grandchild.followup("go")
    assert await soon(lambda: service(first).pending())
    (request,) = service(first).pending()
    second = harness(make_harness, await crash_copy(first, tmp_path))
    never = Asker()
    service(second).on_request(never)
    new_root = await second.agents.resume(root.id, label="root")
    parent = await second.agents.resume("sub_level1", label="level 1")
    assert service(second).waiting(parent) == {grandchild.id}
    interrupted = await second.call("interrupt_agent", {"agent_id": grandchild.id}, parent)
    assert (interrupted.text, interrupted.structured) == (
        f"interrupt requested for agent {grandchild.id}",
        {"accepted": True},
    )
    cancelled = ApprovalDecided(request.request_id, "cancelled", "the call was interrupted")
    stored = (await JsonlPersistence(second.data_dir).inspect(grandchild.id)).events
    assert [e.body for e in stored if e.kind == "approval/decided"] == [cancelled]  # on disk
    assert bodies(new_root, ApprovalDecided) == [cancelled]
    assert service(second).waiting(new_root) == set()
    new_grandchild = await second.agents.resume(grandchild.id, label="level 2")
    await new_grandchild.wait_idle()
    assert never.asked == [] and RAN == []
    assert [m.content for m in tool_messages(new_grandchild)] == [INTERRUPTED_TOOL_TEXT]
