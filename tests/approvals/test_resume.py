"""Resume after a crash: a pending request is asked again, a decided one never; every call of
the last assistant message gets exactly one result before the model is called again.

A crash is simulated in-process by copying the data directory while the first host waits (its
appends are written through at once, so the copy holds what a SIGKILL would leave); a second
host resumes the copy. The real SIGKILL trials are ``tests/reliability/test_approval_crash.py``.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from host.agents import call, say
from host.agents.tool_results import INTERRUPTED_TOOL_TEXT
from host.approvals.requests import Answer, ApprovalRequest
from host.clients.commands import Commands
from host.naming import Owner
from host.sessions.jsonl import JsonlPersistence
from host.sessions.model import ApprovalDecided, ApprovalRequested, MessageEvent
from host.testing import HostHarness, MakeHarness
from host.tools import tool
from tests.approvals.test_service import RAN, Asker, service, shell, tree
from tests.support import bodies, soon, tool_messages
from tool_subagent_control import root as control

GATE = asyncio.Event()


def new_gate() -> None:
    """A fresh gate for the running test's loop."""
    global GATE
    GATE = asyncio.Event()


@tool(needs_approval=True)
async def slow(cmd: str) -> str:
    """A tool that needs consent and waits for the test while it runs."""
    RAN.append(f"slow {cmd}")
    await GATE.wait()
    return f"slow ran {cmd}"


@tool
async def plain(x: int) -> str:
    """Needs no consent; waits for the test while it runs."""
    RAN.append(f"plain {x}")
    await GATE.wait()
    return "plain done"


def harness(
    make_harness: MakeHarness, data_dir: Path, shell_owner: Owner | str = "test", **options: Any
) -> HostHarness:
    h = make_harness(("subagent_control", control), data_dir=data_dir, **options)
    h.host.tools.register(shell.name, shell, owner=shell_owner)
    for made in (slow, plain):
        h.add_tool(made)
    return h


async def crash_copy(h: HostHarness, tmp_path: Path) -> Path:
    """What a SIGKILL now would leave: a copy of the data directory."""
    copy = tmp_path / f"crashed{len(list(tmp_path.glob('crashed*')))}"
    shutil.copytree(h.data_dir, copy)
    return copy


async def blocked_root(
    make_harness: MakeHarness, tmp_path: Path, made: Any
) -> tuple[HostHarness, Any, ApprovalRequest]:
    """A host whose root waits for the user on its call ``made``: host, root, request."""
    RAN.clear()
    h = harness(make_harness, tmp_path / "data")
    root = await h.root()
    h.model.script("root", made, say("never"))
    root.followup("go")
    assert await soon(lambda: service(h).pending())
    (request,) = service(h).pending()
    return h, root, request


async def blocked_child(
    make_harness: MakeHarness, tmp_path: Path, cmd: str
) -> tuple[HostHarness, Any, Any, ApprovalRequest]:
    """A host whose root's child waits for approval of ``shell cmd``: host, root, child,
    request."""
    RAN.clear()
    h = harness(make_harness, tmp_path / "data")
    root, child = await tree(h, 1)
    h.model.script("level 1", call("shell", cmd=cmd), say("never"))
    child.followup("go")
    assert await soon(lambda: service(h).pending())
    (request,) = service(h).pending()
    return h, root, child, request


async def cut_off(make_harness: MakeHarness, tmp_path: Path, made: Any) -> tuple[HostHarness, str]:
    """A root whose call ``made`` (approved if asked) runs when the host dies: the host over
    the crash copy, and the root's id."""
    RAN.clear()
    new_gate()
    first = harness(make_harness, tmp_path / "data")
    root = await first.root()
    service(first).on_request(Asker(Answer.approve()))
    first.model.script("root", made, say("never"))
    root.followup("go")
    assert await soon(lambda: len(RAN) == 1)
    crashed = await crash_copy(first, tmp_path)
    GATE.set()
    return harness(make_harness, crashed), root.id


def asked_again(asker: Asker, before: ApprovalRequest, root_id: str) -> None:
    """``asker`` was asked ``before`` once more: same id and origin, routed to ``root_id``."""
    (again,) = asker.asked
    assert (again.request_id, again.origin) == (before.request_id, before.origin)
    assert again.root_id == root_id


async def test_a_pending_request_is_asked_again_once_and_the_agent_goes_on(
    make_harness: MakeHarness, tmp_path: Path
) -> None:
    first, root, before = await blocked_root(make_harness, tmp_path, call("shell", cmd="make"))
    crashed = await crash_copy(first, tmp_path)
    second = harness(make_harness, crashed)
    asker = Asker(Answer.approve())
    service(second).on_request(asker)
    second.model.script("root", say("built"))
    resumed = await second.agents.resume(root.id, label="root")
    assert await soon(lambda: asker.asked and resumed.status == "idle")
    await resumed.wait_idle()
    asked_again(asker, before, root.id)
    assert RAN == ["make"]
    (result,) = tool_messages(resumed)
    assert (result.content, result.tool_call_id) == ("ran make", before.tool_call_id)
    assert resumed.last_answer == "built"
    assert [b.request_id for b in bodies(resumed, ApprovalRequested)] == [before.request_id]
    assert bodies(resumed, ApprovalDecided) == [ApprovalDecided(before.request_id, "approved")]
    await second.close()
    third = harness(make_harness, crashed)  # decided now: never asked again
    never = Asker()
    service(third).on_request(never)
    again_resumed = await third.agents.resume(root.id, label="root")
    await again_resumed.wait_idle()
    assert never.asked == [] and RAN == ["make"]


async def test_a_child_asks_again_through_the_current_root_and_both_logs_close(
    make_harness: MakeHarness, tmp_path: Path
) -> None:
    first, root, child, before = await blocked_child(make_harness, tmp_path, "rm build")
    crashed = await crash_copy(first, tmp_path)
    second = harness(make_harness, crashed)
    asker = Asker(Answer.deny("not today"))
    service(second).on_request(asker)
    second.model.script("level 1", say("understood"))
    new_root = await second.agents.resume(root.id, label="root")
    assert service(second).waiting(new_root) == {child.id}
    new_child = await second.agents.resume(child.id, label="level 1")
    assert await soon(lambda: asker.asked)
    await new_child.wait_idle()
    asked_again(asker, before, new_root.id)
    assert RAN == []
    (result,) = tool_messages(new_child)
    assert result.content == "the user denied shell: not today" and result.is_error
    for agent in (new_child, new_root):
        assert [b.request_id for b in bodies(agent, ApprovalRequested)] == [before.request_id]
        assert bodies(agent, ApprovalDecided) == [
            ApprovalDecided(before.request_id, "denied", "not today")
        ]
    assert service(second).waiting(new_root) == set()


async def test_a_request_decided_before_the_crash_is_never_asked_again(
    make_harness: MakeHarness, tmp_path: Path
) -> None:
    # approved, recorded, and running when the host dies
    second, root_id = await cut_off(make_harness, tmp_path, call("slow", cmd="deploy"))
    never = Asker()
    service(second).on_request(never)
    resumed = await second.agents.resume(root_id, label="root")
    await resumed.wait_idle()
    assert never.asked == [] and RAN == ["slow deploy"]  # ran once, before the crash
    (result,) = tool_messages(resumed)
    assert (result.content, result.is_error) == (INTERRUPTED_TOOL_TEXT, True)
    assert second.model.requests == []  # nothing asked again: no turn, no model call


async def test_a_call_cut_off_by_a_crash_gets_the_interrupted_result(
    make_harness: MakeHarness, tmp_path: Path
) -> None:
    second, root_id = await cut_off(make_harness, tmp_path, call("plain", x=1))
    second.model.script("root", say("next"))
    resumed = await second.agents.resume(root_id, label="root")
    (result,) = tool_messages(resumed)
    assert result.content == INTERRUPTED_TOOL_TEXT
    resumed.followup("and now?")
    await resumed.wait_idle()
    (request,) = second.model.requests
    roles = [(m.role, m.tool_call_id) for m in request.messages]
    calls = [m for m in request.messages if m.tool_calls]
    assert roles[1:3] == [("assistant", None), ("tool", calls[0].tool_calls[0].id)]


async def test_host_close_leaves_a_pending_request_open_and_it_is_asked_again_on_resume(
    make_harness: MakeHarness, tmp_path: Path
) -> None:
    first, root, child, request = await blocked_child(make_harness, tmp_path, "x")
    await first.close()
    stored = JsonlPersistence(first.data_dir)
    for agent_id in (child.id, root.id):
        events = (await stored.inspect(agent_id)).events
        assert [e.kind for e in events if e.kind.startswith("approval/")] == [
            "approval/requested"
        ]
    child_log = (await stored.inspect(child.id)).events
    assert not [e for e in child_log if isinstance(e.body, MessageEvent) and e.body.role == "tool"]
    second = harness(make_harness, tmp_path / "data")
    asker = Asker(Answer.approve())
    service(second).on_request(asker)
    second.model.script("level 1", say("ran it"))
    await second.agents.resume(root.id, label="root")
    new_child = await second.agents.resume(child.id, label="level 1")
    assert await soon(lambda: asker.asked)
    await new_child.wait_idle()
    asked_again(asker, request, root.id)
    assert RAN == ["x"]
    assert [m.content for m in tool_messages(new_child)] == ["ran x"]


async def test_a_question_left_open_is_asked_again_and_its_answer_is_the_result(
    make_harness: MakeHarness, tmp_path: Path
) -> None:
    made = call("ask_user", question="Which colour?")
    first, root, before = await blocked_root(make_harness, tmp_path, made)
    second = harness(make_harness, await crash_copy(first, tmp_path))
    asker = Asker(Answer.reply("blue"))
    service(second).on_request(asker)
    second.model.script("root", say("painting it blue"))
    resumed = await second.agents.resume(root.id, label="root")
    assert await soon(lambda: asker.asked)
    await resumed.wait_idle()
    asked_again(asker, before, root.id)
    assert asker.asked[0].line() == f"{root.id} (root, depth 0) asks: Which colour?"
    (result,) = tool_messages(resumed)
    assert (result.content, result.structured) == ("blue", {"answer": "blue"})
    assert resumed.last_answer == "painting it blue"


@pytest.mark.parametrize(("glob", "owner"), [("shell", "test"), ("mcp.*", Owner("mcp.box"))])
async def test_a_request_the_policy_now_denies_is_denied_without_asking(
    make_harness: MakeHarness, tmp_path: Path, glob: str, owner: Owner | str
) -> None:
    first, root, before = await blocked_root(make_harness, tmp_path, call("shell", cmd="rm"))
    crashed = await crash_copy(first, tmp_path)
    stricter = {"plugins": {"approvals": {"deny": [glob]}}}
    second = harness(make_harness, crashed, shell_owner=owner, config=stricter)
    never = Asker()
    service(second).on_request(never)
    second.model.script("root", say("I may not"))
    resumed = await second.agents.resume(root.id, label="root")
    await resumed.wait_idle()
    assert never.asked == [] and RAN == []
    (result,) = tool_messages(resumed)
    assert result.content == "the user denied shell: the approval policy does not allow it"
    assert bodies(resumed, ApprovalDecided) == [
        ApprovalDecided(before.request_id, "denied", "the approval policy does not allow it")
    ]


async def test_a_decision_the_roots_mirror_lacks_is_copied_there_at_resume(
    make_harness: MakeHarness, tmp_path: Path
) -> None:
    RAN.clear()
    new_gate()
    first = harness(make_harness, tmp_path / "data")
    root, child = await tree(first, 1)
    service(first).on_request(Asker(Answer.approve()))
    first.model.script("level 1", call("slow", cmd="ship"), say("never"))
    child.followup("go")
    assert await soon(lambda: RAN == ["slow ship"])
    crashed = await crash_copy(first, tmp_path)
    GATE.set()
    root_log = crashed / f"{root.id}.jsonl"  # a kill between the child's append and the root's
    lines = root_log.read_bytes().splitlines(keepends=True)
    assert b'"approval/decided"' in lines[-1]
    root_log.write_bytes(b"".join(lines[:-1]))
    second = harness(make_harness, crashed)
    new_root = await second.agents.resume(root.id, label="root")
    assert service(second).waiting(new_root) == {child.id}
    await second.agents.resume(child.id, label="level 1")
    assert service(second).waiting(new_root) == set()
    (decided,) = bodies(new_root, ApprovalDecided)
    assert decided.decision == "approved" and RAN == ["slow ship"]


async def test_a_waiting_child_that_cannot_be_resumed_with_its_root_is_a_warning(
    make_harness: MakeHarness, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    first, root, child, _request = await blocked_child(make_harness, tmp_path, "x")
    second = harness(make_harness, await crash_copy(first, tmp_path))
    never = Asker()
    service(second).on_request(never)
    resumed = await Commands(second.host).resume(root.id)  # its child has no descriptor
    assert await soon(lambda: "cannot be resumed" in caplog.text)
    (record,) = [r for r in caplog.records if "cannot be resumed" in r.getMessage()]
    assert (record.levelname, record.getMessage()) == (
        "WARNING",
        f'{child.id} waits on the user but cannot be resumed: subagent "{child.id}" is unavailable',
    )
    assert service(second).waiting(resumed) == {child.id} and never.asked == []
