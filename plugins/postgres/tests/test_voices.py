"""A host that lost a session's lease sends nothing on its behalf (``Voice``).

The queueing statement itself checks the sender's lease epoch (two ``PostgresPersistence``
instances are two hosts); in-process deliveries check it before they accept (one host, whose
lease another host — here a row rewritten as a takeover writes it, so that no heartbeat can
race the test — took over). The real paused process is in ``test_multi_host.py``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import agent_host_postgres
import psycopg
import pytest
import tool_subagent_report.plugin as report_plugin
from agent_host_postgres import DSN_ENV
from agent_host_postgres.persistence import PostgresPersistence

from host.agents import ModelRequest, say
from host.agents.models import ModelResponse
from host.errors import HostError
from host.sessions.model import SessionHeader
from host.sessions.persistence import PersistenceError
from host.sessions.remote import RemoteMessage
from host.subagents.types import ChildRequest
from host.testing import HostHarness
from tool_subagent_control import root as control_root

TAKE_OVER = """
UPDATE {schema}.leases
   SET owner = 'intruder:1:0', epoch = epoch + 1, expires_at = now() + interval '1 hour'
 WHERE session_id = %s
"""
"""Another host took the session's lease: the row as its acquisition leaves it."""


def take_over(dsn: str, schema: str, session_id: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(TAKE_OVER.format(schema=schema), (session_id,))


def queued(dsn: str, schema: str) -> list[str]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(f"SELECT message_id FROM {schema}.remote_inbox ORDER BY seq")
        return [str(row[0]) for row in rows.fetchall()]


def note(message_id: str, sender: str) -> RemoteMessage:
    return RemoteMessage(message_id, "target", "followup", "hi", None, sender)


async def test_a_sender_taken_over_queues_nothing(dsn, schema) -> None:
    """The statement that queues a message checks the sender's lease epoch: held or released
    in order by this host, it queues; taken over since (even while this host's writer is
    still open and unaware), it queues nothing and says LOCKED."""
    a, b = PostgresPersistence(dsn, schema=schema), PostgresPersistence(dsn, schema=schema)
    try:
        await sender_fenced(a, b, dsn, schema)
    finally:
        a.close()
        b.close()


async def sender_fenced(a: PostgresPersistence, b: PostgresPersistence, dsn, schema) -> None:
    target = b.open_writer(SessionHeader(id="target"), create=True)  # b holds the target
    sender = a.open_writer(SessionHeader(id="sender"), create=True)
    released = a.open_writer(SessionHeader(id="released"), create=True)
    voice, released_voice = sender.voice(), released.voice()
    released.close()

    assert await a.send_remote(note("rmsg_1", "sender"), voice) is True
    assert await a.send_remote(note("rmsg_2", "released"), released_voice) is True
    take_over(dsn, schema, "sender")
    with pytest.raises(PersistenceError) as err:
        await a.send_remote(note("rmsg_3", "sender"), voice)
    assert err.value.code == "LOCKED"
    assert err.value.message == (
        "session 'sender' was taken over by another host since this host held it; "
        "nothing is sent on its behalf"
    )
    assert queued(dsn, schema) == ["rmsg_1", "rmsg_2"]
    assert not await voice.holds()
    assert await released_voice.holds()
    sender.close()
    target.close()


@pytest.fixture
async def host(dsn: str, schema: str, tmp_path, monkeypatch) -> AsyncIterator[HostHarness]:
    monkeypatch.setenv(DSN_ENV, dsn)
    harness = HostHarness(
        ("postgres", agent_host_postgres),
        ("subagent_control", control_root),
        ("subagent_report", report_plugin),
        data_dir=tmp_path / "a",
        config={"plugins": {"postgres": {"schema": schema}}},
    )
    yield harness
    await harness.close()


async def held_child(host: HostHarness, parent_id: str) -> tuple[str, asyncio.Event]:
    """A continuable child whose first turn waits for the returned event, then ends."""
    entered, release = asyncio.Event(), asyncio.Event()

    async def hold(request: ModelRequest) -> ModelResponse:
        entered.set()
        await release.wait()
        return say("late")

    host.model.script("c", hold)
    parent = host.agents.get(parent_id)
    assert parent is not None
    started = await host.subagents.start_continuable(
        "spawn", ChildRequest(prompt="work"), parent=parent, label="c"
    )
    await entered.wait()
    return started.child_id, release


async def test_a_child_taken_over_neither_reports_nor_notifies_its_parent_here(
    host: HostHarness, dsn, schema, caplog
) -> None:
    """The parent is still this host's; the child was taken over: its report is refused, its
    failed turn settles it here, but its settlement notice is one log line, not a message."""
    root = await host.root()
    child_id, release = await held_child(host, root.id)
    child = host.agents.get(child_id)
    assert child is not None
    before = list(root.session.events)
    take_over(dsn, schema, child_id)

    with pytest.raises(HostError) as err:
        await host.subagents.report_from(child, "from a lost child", delivery="quiet")
    assert (err.value.code, err.value.message) == (
        "LOCKED",
        f'session "{child_id}" was taken over by another host since this host held it; '
        "nothing was sent on its behalf",
    )
    caplog.set_level(logging.WARNING)
    release.set()  # the child's next append is refused: its turn fails and it settles here
    await host.settled(child_id, root)
    refused = [r for r in caplog.records if "settlement notice" in r.getMessage()]
    assert [r.getMessage() for r in refused] == [
        f"settlement notice of subagent {child_id} not sent: {err.value.message} (LOCKED)"
    ]
    assert list(root.session.events) == before
    assert await host.stored_events(root.id) == before


async def test_a_parent_taken_over_cannot_send_to_its_child(host: HostHarness, dsn, schema) -> None:
    """``send_message`` from a parent another host took over reaches no child here."""
    root = await host.root()
    child_id, release = await held_child(host, root.id)
    child = host.agents.get(child_id)
    assert child is not None
    before = list(child.session.events)
    take_over(dsn, schema, root.id)
    with pytest.raises(HostError) as err:
        await host.subagents.followup(root, child_id, "from a lost parent", source=None)
    assert err.value.code == "LOCKED" and f'session "{root.id}"' in err.value.message
    assert list(child.session.events) == before
    release.set()
