"""The control tools called by a parent's own scripted turns (the model's path), persisted."""

from __future__ import annotations

from pathlib import Path

from host.agents import call, say
from host.agents.models import ModelRequest, ModelResponse
from host.cancel import CancelSignal
from host.tools import ToolExec
from host.tools.execute import run_tool
from tests.subagents.control import Ctl
from tests.support import Gate, tool_messages
from tool_subagent_control import root as root_plugin


async def test_a_parent_turn_starts_lists_messages_and_interrupts(ctl: Ctl) -> None:
    parent = await ctl.root()
    gate = Gate()
    ids: list[str] = []

    def remember(request: ModelRequest) -> ModelResponse:
        # the previous tool result carries the child's id
        (last,) = [m for m in request.messages if m.role == "tool"][-1:]
        ids.append(last.structured["subagent_id"])
        return call("list_agents", scope="descendants")

    ctl.model.script(
        "root",
        call("subagent", description="helper", prompt="help me"),
        remember,
        lambda request: call("send_message", subagent_id=ids[0], message="and then this"),
        lambda request: call("interrupt_agent", agent_id=ids[0]),
        say("parent done"),
    )
    ctl.model.script("helper", gate.reply(say("helper first")), say("helper second"))
    parent.followup("delegate")
    await gate.entered.wait()
    await parent.wait_idle()
    (child_id,) = ids
    results = tool_messages(parent.session.events)
    assert [m.content for m in results] == [
        f"started subagent {child_id}",
        f"{child_id} [running] parent={parent.id} depth=1 — helper",
        f"message queued as the next turn for subagent {child_id}",
        f"interrupt requested for agent {child_id}",
    ]
    assert [m.is_error for m in results] == [False] * 4
    assert results[1].structured == [
        {
            "kind": "child",
            "id": child_id,
            "label": "helper",
            "status": "running",
            "parent": parent.id,
            "depth": 1,
        }
    ]
    assert set(results[2].structured) == {"message_id"}
    assert results[3].structured == {"accepted": True}
    # the interrupt parked the queued message: a waking send runs both, FIFO
    child = ctl.agents.get(child_id)
    await child.wait_idle()
    assert [m.content for m in child.inbox.pending()] == ["and then this"]
    ctl.model.script("helper", say("helper third"))
    ctl.model.script("root", say("noted"), say("noted"), say("noted"))
    woke = await ctl.call("send_message", {"subagent_id": child_id, "message": "go on"}, parent)
    assert not woke.is_error
    await ctl.settled(child_id, parent)
    helper = ctl.model.requests_for("helper")
    assert [r.last_user_message().content for r in helper[1:]] == ["and then this", "go on"]
    # the parent's log, as stored, holds the same tool results
    stored = tool_messages(await ctl.stored_events(parent.id))
    assert [m.content for m in stored][:4] == [m.content for m in results]
    assert stored[2].structured == results[2].structured


async def test_a_failed_send_in_a_turn_is_an_error_tool_result(ctl: Ctl) -> None:
    parent = await ctl.root()
    ctl.model.script(
        "root", call("send_message", subagent_id="sub_nobody", message="hi"), say("ok")
    )
    parent.followup("go")
    await parent.wait_idle()
    (result,) = tool_messages(parent.session.events)
    assert result.is_error
    assert result.content == 'message was not delivered: subagent "sub_nobody" is unavailable'


async def test_a_cancelled_send_is_not_delivered(ctl: Ctl, tmp_path: Path) -> None:
    parent = await ctl.root()
    ctl.model.script("bg", say("done"))
    child_id = await ctl.start(parent, "bg")
    await ctl.settled(child_id, parent)
    before = ctl.session_files()
    signal = CancelSignal()
    signal.set()
    exec = ToolExec(agent=parent, ctx=ctl.services, signal=signal)
    result = await run_tool(
        root_plugin.send_message,
        "send_message",
        {"subagent_id": child_id, "message": "x"},
        exec,
    )
    assert result.is_error
    assert result.text == "message was not delivered: cancelled before acceptance"
    assert ctl.agents.get(child_id) is None
    assert ctl.session_files() == before
