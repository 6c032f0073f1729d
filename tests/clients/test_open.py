"""``Commands.open``: a root a front end names, created on first use, resumed after the host
is replaced; ``held``, it accepts messages but runs no turn (``Agent.hold``)."""

from __future__ import annotations

import pytest

from host.agents import say
from host.cli.resume import resume_root
from host.clients.commands import ClientError, Commands
from host.errors import HostError
from host.sessions.model import InboxAccepted, MessageEvent, TurnStart


async def test_a_named_root_is_created_then_resumed_by_the_next_host(make_harness) -> None:
    first = make_harness()
    root = await Commands(first.host).open("my-root")
    assert (root.id, root.label) == ("my-root", "user")
    root.followup("remember this")
    first.model.script("user", say("noted"))
    await root.wait_idle()
    await first.host.aclose()
    second = make_harness(data_dir=first.data_dir)
    again = await Commands(second.host).open("my-root")
    said = [e.body.content for e in again.session.events if isinstance(e.body, MessageEvent)]
    assert said == ["remember this", "noted"]


async def test_a_held_root_keeps_its_messages_and_runs_no_turn(harness) -> None:
    root = await Commands(harness.host).open("held", held=True)
    root.followup("a report")
    root.activate()  # as a registry publishing it does: still held
    await root.wait_idle()
    bodies = [event.body for event in root.session.events]
    assert [type(b).__name__ for b in bodies] == ["InboxAccepted"]
    assert isinstance(bodies[0], InboxAccepted) and bodies[0].content == "a report"
    assert not any(isinstance(b, TurnStart) for b in bodies)
    assert harness.model.requests == []


async def test_a_subagents_session_is_not_a_root_to_open(harness) -> None:
    root = await harness.root()
    child = await harness.agents.create(
        header=type(root.session.header)(id="child-1", parent_session=root.id), label="child"
    )
    with pytest.raises(ClientError) as refused:
        await Commands(harness.host).open(child.id)
    assert refused.value.code == "NOT_A_ROOT"


async def test_a_root_held_elsewhere_is_locked_in_the_clients_words_and_the_stores(
    make_harness,
) -> None:
    holder = make_harness()
    root = await Commands(holder.host).open("busy")
    other = make_harness(data_dir=holder.data_dir)
    with pytest.raises(ClientError) as refused:
        await Commands(other.host).resume(root.id)
    assert (refused.value.code, refused.value.message) == (
        "LOCKED", 'thread "busy" is in use by another process'
    )
    stored = refused.value.stored
    assert stored is not None and stored.code == "LOCKED"
    with pytest.raises(HostError) as cannot:
        await resume_root(other.host, root.id)
    assert cannot.value.message == f"cannot resume busy: {stored.message} (LOCKED)"
    assert cannot.value.code == "LOCKED"
