"""An agent whose session commits in the background (a ``QueuedWriter``, as on PostgreSQL):
its turns wait for their appends without blocking the loop, an interrupt that arrives while
an append is being committed still leaves a whole, well-formed log, and messages sent with
``Inbox.accept_async`` keep their order and are claimed only once durable."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from host.agents import AgentRegistry, ScriptedModel, call, say
from host.agents.driver import TurnOutcome
from host.agents.tool_results import INTERRUPTED_TOOL_TEXT
from host.sessions.model import Event, InboxAccepted, MessageEvent, TurnEnd, TurnStart
from host.sessions.persistence import PersistenceError
from tests.agents.helpers import kinds
from tests.gated_writer import GatedPersistence, GatedWriter
from tests.support import Gate, bodies, stop_reasons, user_texts


@pytest.fixture
def persistence(data_dir: Path) -> GatedPersistence:
    return GatedPersistence(data_dir, held=False)


async def test_a_turn_runs_to_its_end_through_a_background_writer(
    agents: AgentRegistry, model: ScriptedModel, persistence: GatedPersistence
) -> None:
    model.script("w", say("hello"))
    agent = await agents.create(label="w")
    agent.followup("hi")
    await agent.wait_idle()
    assert stop_reasons(agent) == ["completed"]
    stored = await persistence.inspect(agent.id)
    assert kinds(list(stored.events)) == kinds(list(agent.session.events))


async def test_an_interrupt_while_the_turn_start_is_committed_ends_that_turn_interrupted(
    agents: AgentRegistry, model: ScriptedModel, persistence: GatedPersistence
) -> None:
    model.script("w", say("never asked"))
    agent = await agents.create(label="w")
    writer = persistence.writers[-1]
    agent.followup("first")
    writer.hold()
    while not writer.queue:  # the turn starts and waits for its TurnStart's commit
        await asyncio.sleep(0.005)
    assert isinstance(writer.queue[0][0][0].body, TurnStart)
    agent.interrupt()
    await asyncio.sleep(0.02)
    assert agent.status == "running"  # it cannot take the start back: it waits for it
    writer.let_go()
    await agent.wait_idle()

    assert stop_reasons(agent) == ["interrupted"]
    assert kinds(list(agent.session.events)) == ["inbox/accepted", "turn/start", "turn/end"]
    assert model.requests == []
    assert [m.content for m in agent.inbox.pending()] == ["first"]  # parked, as always
    stored = await persistence.inspect(agent.id)
    assert stored.events == tuple(agent.session.events)


async def test_a_message_sent_without_blocking_is_claimable_only_once_written_and_in_order(
    agents: AgentRegistry, model: ScriptedModel, persistence: GatedPersistence
) -> None:
    model.script("w", say("one done"), say("two done"))
    agent = await agents.create(label="w")
    writer = persistence.writers[-1]
    writer.hold()
    first = asyncio.ensure_future(agent.inbox.accept_async("followup", "one"))
    second = asyncio.ensure_future(agent.inbox.accept_async("followup", "two"))
    await asyncio.sleep(0.01)
    assert [m.content for m in agent.inbox.pending()] == ["one", "two"]  # queued in order
    assert not agent.inbox.turn_ready() and agent.status == "idle"  # but not yet durable
    assert agent.inbox.take(turn_start=True) == []
    writer.let_go()
    assert [await first, await second] == [
        e.body.message_id for e in agent.session.events if isinstance(e.body, InboxAccepted)
    ]
    await agent.wait_idle()
    assert [user_texts(r)[-1] for r in model.requests] == ["one", "two"]
    assert stop_reasons(agent) == ["completed", "completed"]


async def test_a_message_whose_acceptance_fails_is_withdrawn(
    agents: AgentRegistry, model: ScriptedModel, persistence: GatedPersistence
) -> None:
    model.script("w", say("later done"))
    agent = await agents.create(label="w")
    writer = persistence.writers[-1]
    writer.hold()
    sending = asyncio.ensure_future(agent.inbox.accept_async("steer", "lost"))
    await asyncio.sleep(0.01)
    writer.step(PersistenceError(PersistenceError.PERSISTENCE_FAILED, "disk gone"))
    with pytest.raises(PersistenceError, match="disk gone"):
        await sending
    assert agent.inbox.pending() == () and agent.status == "idle"
    writer.let_go()
    agent.followup("later")
    await agent.wait_idle()
    assert [user_texts(r) for r in model.requests] == [["later"]]


async def test_a_sender_cancelled_while_its_message_is_written_leaves_it_queued(
    agents: AgentRegistry, model: ScriptedModel, persistence: GatedPersistence
) -> None:
    model.script("w", say("done"))
    agent = await agents.create(label="w")
    writer = persistence.writers[-1]
    writer.hold()
    sending = asyncio.ensure_future(agent.inbox.accept_async("followup", "kept"))
    await asyncio.sleep(0.01)
    sending.cancel()
    await asyncio.sleep(0.01)
    assert not sending.done()  # it learns nothing before the write is settled
    writer.let_go()
    with pytest.raises(asyncio.CancelledError):
        await sending
    await agent.wait_idle()
    assert [user_texts(r) for r in model.requests] == [["kept"]]


async def commit_until(writer: GatedWriter, first_is: Callable[[Event], bool]) -> None:
    """Let held appends through one by one until the oldest waiting one starts with an event
    ``first_is`` accepts (it stays held)."""
    while True:
        while not writer.queue:
            await asyncio.sleep(0.002)
        if first_is(writer.queue[0][0][0]):
            return
        writer.step()
        await asyncio.sleep(0.005)


async def test_an_interrupt_while_the_turn_end_is_committed_still_tells_the_listeners(
    agents: AgentRegistry, model: ScriptedModel, persistence: GatedPersistence
) -> None:
    model.script("w", say("hello"))
    agent = await agents.create(label="w")
    outcomes: list[TurnOutcome] = []
    agent.on_turn_end(outcomes.append)
    writer = persistence.writers[-1]
    agent.followup("hi")
    writer.hold()
    await commit_until(writer, lambda event: isinstance(event.body, TurnEnd))
    agent.interrupt()  # the turn is over: nothing is left to stop
    await asyncio.sleep(0.01)
    writer.let_go()
    await agent.wait_idle()
    assert stop_reasons(agent) == ["completed"]
    assert [o.stop_reason for o in outcomes] == ["completed"]
    task = agent._driver.task
    assert task is not None and not task.cancelled()


async def test_a_tool_result_whose_write_fails_under_an_interrupt_gets_the_interrupted_result(
    agents: AgentRegistry, model: ScriptedModel, persistence: GatedPersistence
) -> None:
    model.script("w", call("echo", text="x"), say("done"))
    agent = await agents.create(label="w")
    writer = persistence.writers[-1]
    agent.followup("hi")
    writer.hold()
    await commit_until(writer, lambda e: isinstance(e.body, MessageEvent) and e.body.role == "tool")
    agent.interrupt()
    await asyncio.sleep(0.01)
    writer.let_go(first_fails=PersistenceError(PersistenceError.PERSISTENCE_FAILED, "disk gone"))
    await agent.wait_idle()
    results = [m for m in bodies(agent, MessageEvent) if m.role == "tool"]
    assert [(m.tool_call_id, m.content, m.is_error) for m in results] == [
        ("call_1", INTERRUPTED_TOOL_TEXT, True)
    ]
    assert stop_reasons(agent) == ["interrupted"]


async def test_a_message_sent_before_an_interrupt_stays_parked_after_its_write_lands(
    agents: AgentRegistry, model: ScriptedModel, persistence: GatedPersistence
) -> None:
    gate = Gate()
    model.script("w", gate.reply(say("never")), say("parked ran"))
    agent = await agents.create(label="w")
    writer = persistence.writers[-1]
    agent.followup("first")
    await gate.entered.wait()
    writer.hold()
    sending = asyncio.ensure_future(agent.inbox.accept_async("followup", "parked"))
    await asyncio.sleep(0.01)
    agent.interrupt()  # parks the queue, the message with it
    await asyncio.sleep(0.01)
    writer.let_go()
    await sending
    await agent.wait_idle()
    assert stop_reasons(agent) == ["interrupted"]
    assert agent.inbox.parked and [m.content for m in agent.inbox.pending()] == ["parked"]
