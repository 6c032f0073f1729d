"""The five failure texts of ``report`` (docs/subagents.md), each leaving nothing delivered."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from host.agents import Agent, call, say
from host.cancel import CancelSignal
from host.sessions.model import InboxAccepted
from host.subagents.errors import SubagentError
from host.subagents.types import ChildRequest
from tests.scenarios import background_tool
from tests.subagents.report import ReportEnv, accepted_text, frame, source
from tests.support import Gate, accepted


def not_reporter(agent_id: str) -> str:
    return f'agent "{agent_id}" is not a live continuable subagent and cannot report'


PARENT_GONE = "direct parent is not live; report was not delivered"
DRAINING = "subagents are draining; report was not delivered"
CANCELLED = "report was cancelled before delivery"


def reports_in(agent: Agent) -> list[InboxAccepted]:
    return [a for a in accepted(agent) if (a.source or {}).get("kind") == "subagent-report"]


async def expect_code(env: ReportEnv, sender: object, code: str, text: str) -> None:
    """The service refuses ``sender`` with ``code`` and exactly ``text``."""
    with pytest.raises(SubagentError) as caught:
        await env.subagents.report_from(sender, "via service", delivery="next-step")  # type: ignore[arg-type]
    assert (caught.value.code, caught.value.message) == (code, text)


async def test_a_root_is_unauthorized(env: ReportEnv) -> None:
    root = await env.root()
    child_gate = Gate()
    env.model.script("bg", child_gate.reply(say("done")))
    child = await env.start(root)
    result = await env.run_report(child, root, "from the root")
    assert (result.is_error, result.text, result.structured) == (True, not_reporter(root.id), None)
    await expect_code(env, root, "UNAUTHORIZED", not_reporter(root.id))
    # the root's own model is not offered report and cannot execute it either
    env.model.script("root", call("report", output="hi"), say("ok"))
    root.followup("try")
    await root.wait_idle()
    tool_result = next(m for m in root.session.model_messages() if m.role == "tool")
    assert (tool_result.is_error, tool_result.content) == (True, 'unknown tool "report"')
    child_gate.open()
    await env.settled(child.id, root)
    assert reports_in(root) == []


async def test_forged_stale_and_replaced_senders_are_unauthorized(env: ReportEnv) -> None:
    root = await env.root()
    env.model.script("bg", say("first turn"))
    child = await env.start(root)
    forged = SimpleNamespace(id=child.id, session=child.session, closed=False)
    result = await env.run_report(child, forged, "forged")
    assert (result.is_error, result.text) == (True, not_reporter(child.id))
    await expect_code(env, forged, "UNAUTHORIZED", not_reporter(child.id))
    report_tool = child.tools.get("report")
    await env.settled(child.id, root)
    # a settled child's old Agent object is stale
    assert report_tool is not None
    from host.tools import ToolExec
    from host.tools.execute import run_tool

    stale = await run_tool(
        report_tool, "report", {"output": "stale"}, ToolExec(agent=child, ctx=env.services)
    )
    assert (stale.is_error, stale.text) == (True, not_reporter(child.id))
    # cold resume replaces it with a new Agent of the same id; the old object stays stale
    resume_gate = Gate()
    env.model.script("bg", resume_gate.reply(say("second turn")))
    await env.subagents.followup(root, child.id, "again", source=None)
    await resume_gate.entered.wait()
    replacement = env.agents.get(child.id)
    assert replacement is not None and replacement is not child
    old = await run_tool(
        report_tool, "report", {"output": "old"}, ToolExec(agent=child, ctx=env.services)
    )
    assert (old.is_error, old.text) == (True, not_reporter(child.id))
    await expect_code(env, child, "UNAUTHORIZED", not_reporter(child.id))
    fresh = await env.run_report(replacement, replacement, "from the live one")
    assert not fresh.is_error
    assert [a.content for a in reports_in(root)] == [frame(child.id, "from the live one")]
    resume_gate.open()
    await env.settled(child.id, root)


async def test_a_one_shot_child_is_unauthorized(env: ReportEnv) -> None:
    root = await env.root()
    # the holder only lends its report tool object: it stays in its turn (and so resident,
    # its tools in place) until the one-shot child's call is over
    hold = Gate()
    env.model.script("holder", hold.reply(say("done")))
    holder = await env.start(root, label="holder")
    gate = Gate()
    env.model.script("solo", gate.reply(say("done")))
    run = await env.subagents.start("spawn", ChildRequest("once", label="solo"), parent=root)
    await gate.entered.wait()
    solo = env.agents.get(run.id)
    assert solo is not None and solo.tools.get("report") is None
    result = await env.run_report(holder, solo, "one-shot")
    assert (result.is_error, result.text) == (True, not_reporter(solo.id))
    gate.open()
    await run.result()
    hold.open()
    await env.settled(holder.id, root)
    assert reports_in(root) == []


async def test_an_absent_parent_is_parent_unavailable_and_its_log_is_untouched(
    env: ReportEnv,
) -> None:
    root = await env.root()
    env.model.script("root", say("root is here"))
    root.followup("hello")
    await root.wait_idle()
    child_gate = Gate()
    env.model.script("bg", child_gate.reply(call("report", output="orphan")), say("done"))
    child = await env.start(root)
    await child_gate.entered.wait()
    await root.dispose()
    log = env.log_path(root.id)
    before = log.read_bytes()
    await expect_code(env, child, "PARENT_UNAVAILABLE", PARENT_GONE)
    child_gate.open()
    await env.settled(child.id)
    (result,) = await env.stored_messages(child.id, "tool")
    assert (result.is_error, result.content, result.structured) == (True, PARENT_GONE, None)
    # nothing was written to the absent parent, and it was not cold-resumed
    assert log.read_bytes() == before
    assert b"orphan" not in before
    assert env.agents.get(root.id) is None


async def test_a_parent_being_released_is_parent_unavailable(env: ReportEnv) -> None:
    """A grandchild whose direct parent (a continuable child) is closing gets no delivery."""
    root = await env.root()
    mid_hold = env.add_stubborn()
    env.add_tool(background_tool())
    grand_gate = Gate()
    env.model.script("mid", call("background", text="grand"), call("stubborn", text="x"))
    env.model.script("grand", grand_gate.reply(say("grand done")))
    mid = await env.start(root, label="mid")
    await mid_hold.entered.wait()
    await grand_gate.entered.wait()
    mid_activation = env.activation(mid.id)
    manager = env.subagents.manager()
    assert mid_activation is not None and manager is not None
    (grand_id,) = mid_activation.children
    grand = env.agents.get(grand_id)
    releasing = asyncio.ensure_future(manager.release(mid_activation))
    await mid_hold.interrupted.wait()  # the parent is closing, still registered
    assert env.agents.get(mid.id) is mid and mid_activation.residency == "closing"
    result = await env.run_report(grand, grand, "to a closing parent")
    assert (result.is_error, result.text) == (True, PARENT_GONE)
    await expect_code(env, grand, "PARENT_UNAVAILABLE", PARENT_GONE)
    assert reports_in(mid) == []
    mid_hold.release.set()
    await releasing
    grand_gate.open()
    await env.settled(grand_id, root)
    mid_users = await env.stored_messages(mid.id, "user")
    assert not any("to a closing parent" in m.content for m in mid_users)


async def test_a_closing_child_cannot_report(env: ReportEnv) -> None:
    root = await env.root()
    held = env.add_stubborn()
    env.model.script("bg", call("stubborn", text="hold"))
    child = await env.start(root)
    await held.entered.wait()
    activation = env.activation(child.id)
    manager = env.subagents.manager()
    assert activation is not None and manager is not None
    releasing = asyncio.ensure_future(manager.release(activation))
    await held.interrupted.wait()  # release has begun: the ChildActivation is closing
    assert activation.residency == "closing"
    closing_text = f'subagent "{child.id}" is closing; report was not delivered'
    result = await env.run_report(child, child, "too late")
    assert (result.is_error, result.text) == (True, closing_text)
    await expect_code(env, child, "ACTIVATION_CLOSING", closing_text)
    held.release.set()
    await releasing
    await root.wait_idle()
    assert accepted(root) == []  # a release is quiet: no report, no notice


async def test_a_draining_child_cannot_report(env: ReportEnv) -> None:
    root = await env.root()
    held = env.add_stubborn()
    env.model.script("bg", call("stubborn", text="hold"))
    child = await env.start(root)
    await held.entered.wait()
    draining = asyncio.ensure_future(env.subagents.drain_descendants(root))
    await held.interrupted.wait()
    result = await env.run_report(child, child, "during drain")
    assert (result.is_error, result.text) == (True, DRAINING)
    await expect_code(env, child, "DRAINING", DRAINING)
    held.release.set()
    await draining
    assert env.activation(child.id) is None
    assert accepted(root) == []


async def test_a_cancelled_report_is_not_delivered(env: ReportEnv) -> None:
    root = await env.root()
    gate = Gate()
    env.model.script("bg", gate.reply(say("done")))
    child = await env.start(root)
    await gate.entered.wait()
    signal = CancelSignal()
    signal.set("caller gave up")
    result = await env.run_report(child, child, "never sent", signal=signal)
    assert (result.is_error, result.text, result.structured) == (True, CANCELLED, None)
    with pytest.raises(SubagentError) as caught:
        await env.subagents.report_from(child, "x", delivery="quiet", signal=signal)
    assert (caught.value.code, caught.value.message) == ("CANCELLED", CANCELLED)
    # an unset signal goes through
    ok = await env.run_report(child, child, "sent", signal=CancelSignal())
    assert ok.text == accepted_text(ok.structured["message_id"])
    gate.open()
    await env.settled(child.id, root)
    assert [a.content for a in reports_in(root)] == [frame(child.id, "sent")]
    assert all(a.source == source(child.id) for a in reports_in(root))
