"""An agent whose session commits in the background (a ``QueuedWriter``, as on PostgreSQL):
its turns wait for their appends without blocking the loop, and an interrupt that arrives
while an append is being committed still leaves a whole, well-formed log."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from host.agents import AgentRegistry, ScriptedModel, say
from host.sessions.model import TurnStart
from tests.agents.helpers import kinds, stop_reasons
from tests.gated_writer import GatedPersistence


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
