"""``interrupt_agent`` end to end: current turn only, parked inbox, ancestor authority, no-ops."""

from __future__ import annotations

from host.agents import Agent, call, say
from tests.subagents.control import Ctl
from tests.support import Gate, forged, stop_reasons, turn_count

ACCEPTED = {"accepted": True}


async def held_child(ctl: Ctl, parent: Agent, label: str, answer: str = "done") -> tuple[str, Gate]:
    gate = Gate()
    ctl.model.script(label, gate.reply(say(answer)))
    child_id = await ctl.start(parent, label)
    await gate.entered.wait()
    return child_id, gate


async def tree(ctl: Ctl) -> tuple[Agent, str, str, Gate]:
    """root → mid (waiting on its child) → grand (a held model call)."""
    root = await ctl.root()
    gate = Gate()
    ctl.model.script("mid", call("subagent", description="grand", prompt="deep"), say("waits"))
    ctl.model.script("grand", gate.reply(say("grand done")))
    mid_id = await ctl.start(root, "mid")
    await gate.entered.wait()
    mid = ctl.agents.get(mid_id)
    await mid.wait_idle()
    (grand_id,) = ctl.manager.activation(mid_id).children
    return root, mid_id, grand_id, gate


async def test_interrupt_stops_the_current_turn_and_keeps_the_queue_parked(ctl: Ctl) -> None:
    root = await ctl.root()
    child_id, gate = await held_child(ctl, root, "bg")
    queued = await ctl.call("send_message", {"subagent_id": child_id, "message": "queued"}, root)
    assert not queued.is_error
    result = await ctl.call("interrupt_agent", {"agent_id": child_id}, root)
    assert not result.is_error
    assert result.text == f"interrupt requested for agent {child_id}"
    assert result.structured == ACCEPTED
    child = ctl.agents.get(child_id)
    await child.wait_idle()
    assert gate.cancelled
    # only the current turn stopped: the child is resident, the followup parked, no new turn
    assert stop_reasons(child.session.events) == ["interrupted"]
    assert turn_count(child.session.events) == 1
    activation = ctl.manager.activation(child_id)
    assert activation is not None and activation.residency == "waiting"
    assert [m.content for m in child.inbox.pending()] == ["queued"]
    assert child.inbox.parked
    # a later waking send runs the parked message first, then its own (FIFO)
    ctl.model.script("bg", say("one"), say("two"))
    woke = await ctl.call("send_message", {"subagent_id": child_id, "message": "wake up"}, root)
    assert not woke.is_error
    await ctl.settled(child_id, root)
    requests = ctl.model.requests_for("bg")
    assert [r.last_user_message().content for r in requests[1:]] == ["queued", "wake up"]
    events = await ctl.stored_events(child_id)
    assert stop_reasons(events) == ["interrupted", "completed", "completed"]


async def test_interrupting_a_waiting_branch_leaves_its_descendants_running(ctl: Ctl) -> None:
    root, mid_id, grand_id, gate = await tree(ctl)
    result = await ctl.call("interrupt_agent", {"agent_id": mid_id}, root)
    assert result.text == f"interrupt requested for agent {mid_id}"
    assert ctl.agents.status(grand_id) == "running"
    assert not gate.cancelled
    gate.open()
    await ctl.settled(grand_id)
    await ctl.settled(mid_id, root)


async def test_a_grandparent_interrupts_a_grandchild(ctl: Ctl) -> None:
    root, mid_id, grand_id, gate = await tree(ctl)
    result = await ctl.call("interrupt_agent", {"agent_id": grand_id}, root)
    assert not result.is_error
    assert result.text == f"interrupt requested for agent {grand_id}"
    assert result.structured == ACCEPTED
    await ctl.settled(grand_id)
    assert gate.cancelled
    events = await ctl.stored_events(grand_id)
    assert stop_reasons(events) == ["interrupted"]
    await ctl.settled(mid_id, root)
    # the middle child was never interrupted: its turns all completed
    assert "interrupted" not in stop_reasons(await ctl.stored_events(mid_id))


async def test_a_direct_parent_interrupts_its_child(ctl: Ctl) -> None:
    root, mid_id, grand_id, gate = await tree(ctl)
    mid = ctl.agents.get(mid_id)
    result = await ctl.call("interrupt_agent", {"agent_id": grand_id}, mid)
    assert result.text == f"interrupt requested for agent {grand_id}"
    await ctl.settled(grand_id)
    assert gate.cancelled
    await ctl.settled(mid_id, root)


async def test_self_sibling_stranger_and_stale_callers_are_refused(ctl: Ctl) -> None:
    root, mid_id, grand_id, gate = await tree(ctl)
    stranger = await ctl.root("stranger")
    sibling_id, sibling_gate = await held_child(ctl, root, "sib")
    mid, sibling = ctl.agents.get(mid_id), ctl.agents.get(sibling_id)
    grand = ctl.agents.get(grand_id)
    grand_events = len(grand.session.events)

    async def refused(target: str, caller: Agent, text: str) -> None:
        result = await ctl.call("interrupt_agent", {"agent_id": target}, caller)
        assert result.is_error
        assert result.text == text
        assert result.structured is None

    await refused(mid_id, mid, f'agent "{mid_id}" cannot interrupt itself')
    await refused(root.id, root, f'agent "{root.id}" cannot interrupt itself')
    await refused(
        grand_id, sibling, f'subagent "{grand_id}" is not a live descendant of agent "{sibling_id}"'
    )
    await refused(
        sibling_id, mid, f'subagent "{sibling_id}" is not a live descendant of agent "{mid_id}"'
    )
    await refused(
        grand_id,
        stranger,
        f'subagent "{grand_id}" is not a live descendant of agent "{stranger.id}"',
    )
    await refused(
        mid_id, grand, f'subagent "{mid_id}" is not a live descendant of agent "{grand_id}"'
    )
    await refused(
        grand_id, forged(root), f'interrupting "{grand_id}" requires the exact live ancestor agent'
    )
    # every target untouched
    assert ctl.agents.status(grand_id) == "running"
    assert ctl.agents.status(sibling_id) == "running"
    assert not gate.cancelled and not sibling_gate.cancelled
    assert len(grand.session.events) == grand_events
    assert not grand.inbox.parked
    gate.open()
    sibling_gate.open()
    await ctl.settled(grand_id)
    await ctl.settled(sibling_id)
    await ctl.settled(mid_id, root)


async def test_absent_and_settled_targets_are_accepted_without_a_cold_resume(ctl: Ctl) -> None:
    root = await ctl.root()
    ctl.model.script("bg", say("done"))
    child_id = await ctl.start(root, "bg")
    await ctl.settled(child_id, root)
    before = ctl.session_files()
    requests = len(ctl.model.requests)
    for target in (child_id, "sub_missing", "../x", "y" * 4096):
        result = await ctl.call("interrupt_agent", {"agent_id": target}, root)
        assert not result.is_error, result.text
        assert result.text == f"interrupt requested for agent {target}"
        assert result.structured == ACCEPTED
    assert ctl.agents.get(child_id) is None  # not resumed
    assert ctl.manager.activation(child_id) is None
    assert ctl.session_files() == before  # no new events in the target's log, no new files
    assert len(ctl.model.requests) == requests


async def test_a_grandparent_interrupts_a_foreground_one_shot_grandchild(ctl: Ctl) -> None:
    root = await ctl.root()
    gate = Gate()
    ctl.model.script(
        "mid",
        call("subagent", description="fg", prompt="deep", run_in_background=False),
        say("mid saw it stop"),
    )
    ctl.model.script("fg", gate.reply(say("never")))
    mid_id = await ctl.start(root, "mid")
    await gate.entered.wait()
    (fg,) = [a for a in ctl.agents.list() if a.label == "fg"]
    result = await ctl.call("interrupt_agent", {"agent_id": fg.id}, root)
    assert result.text == f"interrupt requested for agent {fg.id}"
    await ctl.settled(mid_id, root)
    assert gate.cancelled
    mid_events = await ctl.stored_events(mid_id)
    (tool_result,) = [e.body for e in mid_events if e.kind == "message" and e.body.role == "tool"]
    assert tool_result.is_error
    assert tool_result.content == f"subagent {fg.id} stopped (interrupted) before it finished"
    assert stop_reasons(mid_events) == ["completed"]
