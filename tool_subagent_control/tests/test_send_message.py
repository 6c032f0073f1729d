"""``send_message`` end to end: cold resume, FIFO turns, provenance, refusals that write nothing."""

from __future__ import annotations

import pytest

from host.agents import Agent, call, say
from host.sessions.model import InboxClaimed, MessageEvent
from tests.subagents.control import Ctl
from tests.support import Gate, accepted, bodies, stop_reasons, turn_count

NOT_DELIVERED = "message was not delivered: "


async def settled_child(ctl: Ctl, parent: Agent, label: str = "bg") -> str:
    ctl.model.script(label, say("first answer"))
    child_id = await ctl.start(parent, label, prompt="first task")
    await ctl.settled(child_id, parent)
    assert ctl.agents.get(child_id) is None
    return child_id


async def test_a_settled_child_is_cold_resumed_with_the_coordinator_source(ctl: Ctl) -> None:
    parent = await ctl.root()
    child_id = await settled_child(ctl, parent)
    ctl.model.script("bg", say("second answer"))
    result = await ctl.call(
        "send_message", {"subagent_id": child_id, "message": "second task"}, parent
    )
    assert not result.is_error, result.text
    assert result.text == f"message queued as the next turn for subagent {child_id}"
    assert set(result.structured) == {"message_id"}
    message_id = result.structured["message_id"]
    assert ctl.agents.get(child_id) is not None  # resumed (resident again)
    await ctl.settled(child_id, parent)
    # the resumed turn saw the child's history, then the message
    request = ctl.model.requests_for("bg")[-1]
    assert [m.content for m in request.messages] == ["first task", "first answer", "second task"]
    # durable provenance in the child's own log
    source = {"kind": "coordinator", "sender_session_id": parent.id}
    events = await ctl.stored_events(child_id)
    (acceptance,) = [a for a in accepted(events) if a.message_id == message_id]
    assert (acceptance.delivery, acceptance.content, acceptance.source) == (
        "followup",
        "second task",
        source,
    )
    (message,) = [m for m in bodies(events, MessageEvent) if m.message_id == message_id]
    assert (message.role, message.content, message.source) == ("user", "second task", source)
    assert stop_reasons(events) == ["completed", "completed"]


async def test_a_message_during_an_open_turn_runs_as_a_separate_later_turn(ctl: Ctl) -> None:
    parent = await ctl.root()
    gate = Gate()
    # first turn: a held model call, then a tool step (a step boundary), then the answer
    ctl.model.script("bg", gate.reply(call("list_agents")), say("first done"), say("second done"))
    child_id = await ctl.start(parent, "bg", prompt="first task")
    await gate.entered.wait()
    result = await ctl.call("send_message", {"subagent_id": child_id, "message": "later"}, parent)
    assert result.text == f"message queued as the next turn for subagent {child_id}"
    message_id = result.structured["message_id"]
    gate.open()
    await ctl.settled(child_id, parent)
    _first, second, third = ctl.model.requests_for("bg")
    assert "later" not in [m.content for m in second.messages]  # not steered into the turn
    assert third.last_user_message().content == "later"
    events = await ctl.stored_events(child_id)
    assert turn_count(events) == 2
    assert stop_reasons(events) == ["completed", "completed"]
    claims = [e for e in events if isinstance(e.body, InboxClaimed)]
    first_end = next(e.seq for e in events if e.kind == "turn/end")
    (claim,) = [e for e in claims if message_id in e.body.message_ids]
    assert claim.seq > first_end  # claimed by the second turn, after the first ended
    assert claim.body.message_ids == (message_id,)


async def test_unknown_and_hostile_ids_are_not_delivered_and_write_nothing(ctl: Ctl) -> None:
    parent = await ctl.root()
    child_id = await settled_child(ctl, parent)
    before = ctl.session_files()
    index = ctl.data_dir / ".index" / "identity.jsonl"
    index_before = index.read_bytes()
    for bad in ("sub_missing", "../x", "x" * 4096, "", "a/b", "..", "sub x"):
        result = await ctl.call("send_message", {"subagent_id": bad, "message": "hi"}, parent)
        assert result.is_error
        assert result.text == f'{NOT_DELIVERED}subagent "{bad}" is unavailable'
        assert result.structured is None
    assert ctl.session_files() == before
    assert index.read_bytes() == index_before
    assert not (ctl.data_dir.parent / "x.jsonl").exists()
    assert ctl.agents.get(child_id) is None


async def test_an_ordinary_session_and_the_caller_itself_are_not_its_subagents(ctl: Ctl) -> None:
    parent = await ctl.root()
    other = await ctl.root("other")
    before = ctl.session_files()
    result = await ctl.call("send_message", {"subagent_id": other.id, "message": "hi"}, parent)
    assert result.text == f'{NOT_DELIVERED}subagent "{other.id}" is unavailable'
    result = await ctl.call("send_message", {"subagent_id": parent.id, "message": "hi"}, parent)
    assert result.text == f'{NOT_DELIVERED}subagent "{parent.id}" is unavailable'
    assert ctl.session_files() == before


async def test_another_parents_child_is_refused_and_not_resumed(ctl: Ctl) -> None:
    parent = await ctl.root()
    other = await ctl.root("other")
    child_id = await settled_child(ctl, parent)
    before = ctl.session_files()
    result = await ctl.call("send_message", {"subagent_id": child_id, "message": "hi"}, other)
    assert result.is_error
    assert result.text == f'{NOT_DELIVERED}subagent "{child_id}" belongs to another parent session'
    assert ctl.agents.get(child_id) is None
    assert ctl.session_files() == before
    # a live (resident) child of another parent is refused the same way
    gate = Gate()
    ctl.model.script("live", gate.reply(say("done")))
    live_id = await ctl.start(parent, "live")
    await gate.entered.wait()
    result = await ctl.call("send_message", {"subagent_id": live_id, "message": "hi"}, other)
    assert result.text == f'{NOT_DELIVERED}subagent "{live_id}" belongs to another parent session'
    live = ctl.agents.get(live_id)
    assert [a.content for a in accepted(live.session.events)] == ["work"]
    gate.open()
    await ctl.settled(live_id, parent)


async def test_a_grandparent_cannot_send_to_a_grandchild(ctl: Ctl) -> None:
    parent = await ctl.root()
    gate = Gate()
    ctl.model.script("mid", call("subagent", description="grand", prompt="deep"), say("waits"))
    ctl.model.script("grand", gate.reply(say("grand done")))
    mid_id = await ctl.start(parent, "mid")
    await gate.entered.wait()
    (grand_id,) = ctl.manager.activation(mid_id).children
    result = await ctl.call("send_message", {"subagent_id": grand_id, "message": "hi"}, parent)
    assert result.text == f'{NOT_DELIVERED}subagent "{grand_id}" belongs to another parent session'
    gate.open()
    await ctl.settled(grand_id)
    await ctl.settled(mid_id, parent)


async def test_a_one_shot_child_has_no_continuation_state(ctl: Ctl) -> None:
    parent = await ctl.root()
    ctl.model.script("once", say("done once"))
    child_id = await ctl.start_one_shot(parent, "once")
    before = ctl.session_files()
    result = await ctl.call("send_message", {"subagent_id": child_id, "message": "more"}, parent)
    assert result.is_error
    assert result.text == (
        f'{NOT_DELIVERED}subagent "{child_id}" has no supported continuation state and cannot '
        "be resumed; do not retry send_message with this id"
    )
    assert ctl.agents.get(child_id) is None
    assert ctl.session_files() == before


@pytest.mark.parametrize(
    "descriptor",
    [
        {"version": 2, "mode": "bogus", "secret": "hunter2"},
        {"version": 9, "mode": "continuable", "provider": "spawn", "label": "new"},
        "garbage",
    ],
)
async def test_a_corrupt_or_unsupported_child_is_not_resumable(
    ctl: Ctl, descriptor: object
) -> None:
    parent = await ctl.root()
    ctl.write_child("broken_child", parent.id, descriptor)
    before = ctl.session_files()
    result = await ctl.call(
        "send_message", {"subagent_id": "broken_child", "message": "more"}, parent
    )
    assert result.text == (
        f'{NOT_DELIVERED}subagent "broken_child" has no supported continuation state and '
        "cannot be resumed; do not retry send_message with this id"
    )
    assert "hunter2" not in result.text
    assert ctl.agents.get("broken_child") is None
    assert ctl.session_files() == before


async def test_a_stale_parent_object_is_refused(ctl: Ctl) -> None:
    parent = await ctl.root()
    child_id = await settled_child(ctl, parent)
    await parent.dispose()
    replacement = await ctl.agents.resume(parent.id, label="root")
    before = ctl.session_files()
    result = await ctl.call("send_message", {"subagent_id": child_id, "message": "x"}, parent)
    assert result.text == (
        f'{NOT_DELIVERED}subagent "{child_id}" delivery requires the exact live parent agent'
    )
    assert ctl.session_files() == before
    ctl.model.script("bg", say("again"))
    result = await ctl.call("send_message", {"subagent_id": child_id, "message": "x"}, replacement)
    assert not result.is_error
    await ctl.settled(child_id, replacement)


async def test_a_resident_child_messages_its_own_child(ctl: Ctl) -> None:
    parent = await ctl.root()
    gate = Gate()
    ctl.model.script("mid", call("subagent", description="grand", prompt="deep"), say("waits"))
    ctl.model.script("grand", gate.reply(say("grand done")), say("grand again"))
    mid_id = await ctl.start(parent, "mid")
    await gate.entered.wait()
    mid = ctl.agents.get(mid_id)
    await mid.wait_idle()
    (grand_id,) = ctl.manager.activation(mid_id).children
    result = await ctl.call("send_message", {"subagent_id": grand_id, "message": "also"}, mid)
    assert result.text == f"message queued as the next turn for subagent {grand_id}"
    gate.open()
    await ctl.settled(grand_id)
    await ctl.settled(mid_id, parent)
    events = await ctl.stored_events(grand_id)
    (acceptance,) = [a for a in accepted(events) if a.message_id == result.structured["message_id"]]
    assert acceptance.source == {"kind": "coordinator", "sender_session_id": mid_id}
    assert stop_reasons(events) == ["completed", "completed"]
