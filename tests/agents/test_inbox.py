"""Inbox semantics through real agents: followup, steer, inject, interrupt, dispose."""

from __future__ import annotations

import asyncio

import pytest

from host.agents import AgentRegistry, InboxClosedError, ScriptedModel, call, say
from host.agents.driver import TurnOutcome
from host.agents.tool_results import INTERRUPTED_TOOL_TEXT
from host.sessions.model import InboxAccepted, InboxClaimed, MessageEvent, TurnStart
from host.tools import ToolExec, tool
from tests.agents.helpers import TextArgs, gated_tool, kinds
from tests.support import Gate, bodies, stop_reasons, user_texts


async def test_followups_run_fifo_as_separate_turns(
    agents: AgentRegistry, model: ScriptedModel
) -> None:
    gate = Gate()
    model.script("w", gate.reply(say("one")), say("two"))
    agent = await agents.create(label="w")

    first = agent.followup("first")
    assert agent.status == "running"
    accepted = bodies(agent, InboxAccepted)
    assert [(a.message_id, a.delivery, a.content) for a in accepted] == [
        (first, "followup", "first")
    ]
    await gate.entered.wait()
    second = agent.followup("second", source={"kind": "test"})
    gate.open()
    await agent.wait_idle()

    assert [user_texts(r) for r in model.requests] == [["first"], ["first", "second"]]
    assert stop_reasons(agent) == ["completed", "completed"]
    assert len(bodies(agent, TurnStart)) == 2
    users = [m for m in bodies(agent, MessageEvent) if m.role == "user"]
    assert [(u.message_id, u.source) for u in users] == [
        (first, None),
        (second, {"kind": "test"}),
    ]
    assert [c.message_ids for c in bodies(agent, InboxClaimed)] == [(first,), (second,)]
    assert agent.status == "idle"
    assert agent.last_answer == "two"
    model.assert_consumed()


async def test_steer_joins_running_turn_at_next_step(
    agents: AgentRegistry, model: ScriptedModel
) -> None:
    gate = Gate()
    model.script("w", gate.reply(call("echo", text="a")), say("steered"))
    agent = await agents.create(label="w")
    agent.followup("start")
    await gate.entered.wait()
    agent.steer("change course")
    agent.steer("and hurry")
    gate.open()
    await agent.wait_idle()

    assert len(bodies(agent, TurnStart)) == 1
    second = model.requests[1]
    assert [(m.role, m.content) for m in second.messages] == [
        ("user", "start"),
        ("assistant", ""),
        ("tool", "A"),
        ("user", "change course"),
        ("user", "and hurry"),
    ]
    assert len(bodies(agent, InboxClaimed)[1].message_ids) == 2  # one step claims the batch
    assert stop_reasons(agent) == ["completed"]


async def test_steer_after_a_final_answer_takes_another_step(
    agents: AgentRegistry, model: ScriptedModel
) -> None:
    gate = Gate()
    model.script("w", gate.reply(say("finished?")), say("now finished"))
    agent = await agents.create(label="w")
    agent.followup("start")
    await gate.entered.wait()
    agent.steer("one more thing")
    gate.open()
    await agent.wait_idle()
    assert len(bodies(agent, TurnStart)) == 1
    assert user_texts(model.requests[1]) == ["start", "one more thing"]
    assert agent.last_answer == "now finished"


async def test_steer_wakes_an_idle_agent(agents: AgentRegistry, model: ScriptedModel) -> None:
    model.script("w", say("heard"))
    agent = await agents.create(label="w")
    agent.steer("wake up")
    assert agent.status == "running"
    await agent.wait_idle()
    assert user_texts(model.requests[0]) == ["wake up"]


async def test_inject_does_not_wake_and_is_seen_at_the_next_step(
    agents: AgentRegistry, model: ScriptedModel
) -> None:
    model.script("w", say("ok"))
    agent = await agents.create(label="w")
    wakes: list[str] = []  # every wake the inbox asks of the driver (the only way a turn starts)
    wake = agent._driver.wake

    def spy() -> None:
        wakes.append(agent.status)
        wake()

    agent.inbox.bind(spy)
    quiet = agent.inject("background fact")
    assert (wakes, agent.status, agent.inbox.turn_ready()) == ([], "idle", False)
    await agent.wait_idle()  # returns at once: nothing runs
    assert model.requests == [] and wakes == []
    assert [a.message_id for a in bodies(agent, InboxAccepted)] == [quiet]

    agent.followup("go")
    assert wakes == ["idle"]
    await agent.wait_idle()
    assert user_texts(model.requests[0]) == ["background fact", "go"]
    assert stop_reasons(agent) == ["completed"]
    assert wakes == ["idle"]  # a wake the inject deferred would have come during that turn


async def test_inject_during_a_turn_is_claimed_at_the_next_step(
    agents: AgentRegistry, model: ScriptedModel
) -> None:
    gate = Gate()
    model.script("w", gate.reply(call("echo", text="x")), say("done"))
    agent = await agents.create(label="w")
    agent.followup("start")
    await gate.entered.wait()
    agent.inject("fyi")
    gate.open()
    await agent.wait_idle()
    assert user_texts(model.requests[1]) == ["start", "fyi"]


async def test_interrupt_mid_model_call_parks_the_queue(
    agents: AgentRegistry, model: ScriptedModel
) -> None:
    gate = Gate()
    model.script("w", gate.reply(say("never")), say("parked ran"), say("new ran"))
    agent = await agents.create(label="w")
    outcomes: list[TurnOutcome] = []
    agent.on_turn_end(outcomes.append)
    agent.followup("first")
    await gate.entered.wait()
    agent.followup("parked")
    agent.interrupt()
    await agent.wait_idle()

    assert gate.cancelled
    assert stop_reasons(agent) == ["interrupted"]
    assert [o.stop_reason for o in outcomes] == ["interrupted"]
    # parked: no turn can start (a wake finds no turn work) until the next waking send
    assert agent.inbox.parked and not agent.inbox.turn_ready()
    assert [m.content for m in agent.inbox.pending()] == ["parked"]
    agent._driver.wake()
    assert agent.status == "idle"
    assert len(model.requests) == 1

    agent.followup("new")
    await agent.wait_idle()
    assert [user_texts(r)[-1] for r in model.requests[1:]] == ["parked", "new"]
    assert stop_reasons(agent) == ["interrupted", "completed", "completed"]
    assert [o.last_answer for o in outcomes] == [None, "parked ran", "new ran"]
    model.assert_consumed()


async def test_interrupt_mid_tool_cancels_it_and_records_an_error_result(
    agents: AgentRegistry, model: ScriptedModel
) -> None:
    gate = Gate()
    dispose = agents.tools.register("slow", gated_tool("slow", gate), owner="test")
    model.script("w", call("slow", text="x"), say("parked ran"), say("new ran"))
    agent = await agents.create(label="w")
    agent.followup("first")
    await gate.entered.wait()
    agent.followup("parked")
    agent.interrupt()
    await agent.wait_idle()

    assert gate.cancelled
    assert gate.signal is not None and gate.signal.is_set()
    tool_messages = [m for m in bodies(agent, MessageEvent) if m.role == "tool"]
    assert [(m.content, m.is_error, m.tool_call_id) for m in tool_messages] == [
        (INTERRUPTED_TOOL_TEXT, True, "call_1")
    ]
    assert stop_reasons(agent) == ["interrupted"]

    agent.followup("new")
    await agent.wait_idle()
    assert [user_texts(r)[-1] for r in model.requests[1:]] == ["parked", "new"]
    assert stop_reasons(agent) == ["interrupted", "completed", "completed"]
    dispose()


async def test_interrupt_without_keeping_the_inbox_drops_queued_messages(
    agents: AgentRegistry, model: ScriptedModel
) -> None:
    gate = Gate()
    model.script("w", gate.reply(say("never")), say("new ran"))
    agent = await agents.create(label="w")
    agent.followup("first")
    await gate.entered.wait()
    dropped = agent.followup("dropped")
    agent.interrupt(keep_inbox=False)
    await agent.wait_idle()
    agent.followup("new")
    await agent.wait_idle()
    assert user_texts(model.requests[1]) == ["first", "new"]
    assert (dropped,) in [c.message_ids for c in bodies(agent, InboxClaimed)]


async def test_dispose_during_a_turn(
    agents: AgentRegistry, model: ScriptedModel, store: object
) -> None:
    gate = Gate()
    model.script("w", gate.reply(say("never")))
    agent = await agents.create(label="w")
    agent_id = agent.id
    agent.followup("work")
    await gate.entered.wait()

    await agent.dispose()
    assert gate.cancelled
    assert stop_reasons(agent) == ["interrupted"]
    assert agent.status == "idle"
    assert agents.get(agent_id) is None
    await agent.dispose()  # idempotent
    with pytest.raises(InboxClosedError):
        agent.followup("too late")

    resumed = await agents.resume(agent_id, label="w")  # released: the lock is free again
    assert kinds(list(resumed.session.events))[-1] == "turn/end"
    assert stop_reasons(resumed) == ["interrupted"]


async def test_interrupt_before_the_turn_starts_parks_its_followup(
    agents: AgentRegistry, model: ScriptedModel
) -> None:
    gate = Gate()
    model.script("w", gate.reply(say("never")), say("first ran"), say("second ran"))
    agent = await agents.create(label="w")
    agent.followup("zero")
    await gate.entered.wait()
    agent.interrupt()
    agent.interrupt()  # a second request for the same turn changes nothing
    await agent.wait_idle()
    agent.followup("first")  # wakes, and is interrupted before its turn takes a step
    agent.interrupt()
    await agent.wait_idle()
    assert len(model.requests) == 1 and stop_reasons(agent) == ["interrupted"]
    assert [m.content for m in agent.inbox.pending()] == ["first"]

    agent.followup("second")
    await agent.wait_idle()
    assert [user_texts(r)[-1] for r in model.requests[1:]] == ["first", "second"]
    assert stop_reasons(agent) == ["interrupted", "completed", "completed"]


async def test_a_tool_that_swallows_the_cancellation_still_ends_the_turn_interrupted(
    agents: AgentRegistry, model: ScriptedModel
) -> None:
    gate = Gate()

    @tool("stubborn", "Ignores cancellation.", TextArgs)
    async def stubborn(args: TextArgs, exec: ToolExec) -> str:
        try:
            await gate.hold(exec.signal)
        except asyncio.CancelledError:
            return "finished anyway"
        return "finished"

    agents.tools.register("stubborn", stubborn, owner="test")
    model.script("w", call("stubborn", text="x"), say("never"))
    agent = await agents.create(label="w")
    agent.followup("go")
    await gate.entered.wait()
    assert agents.status(agent.id) == "running"
    agent.interrupt()
    await agent.wait_idle()
    assert stop_reasons(agent) == ["interrupted"]
    assert len(model.requests) == 1
    assert [m.content for m in bodies(agent, MessageEvent) if m.role == "tool"] == [
        "finished anyway"
    ]
    assert agents.status(agent.id) == "idle"
