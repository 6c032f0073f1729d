"""A host that lost a session's lease sends nothing on its behalf (``Voice``).

The queueing statement itself checks the sender's lease epoch (two ``PostgresPersistence``
instances are two hosts); in-process deliveries check it before they accept (one host, whose
lease another host — here a row rewritten as a takeover writes it, so that no heartbeat can
race the test — took over). A real takeover comes only once the lease expired, after the TTL
on the paused host's clock too; ``take_over`` moves this host's lease clock on as far. The
real paused process is in ``test_multi_host.py``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator

import agent_host_postgres
import psycopg
import pytest
from agent_host_postgres import DSN_ENV, leases
from agent_host_postgres.persistence import PostgresPersistence

from host.agents import ModelRequest, say
from host.agents.models import ModelResponse
from host.errors import HostError
from host.sessions.model import Event, SessionHeader, TurnStart
from host.sessions.persistence import PersistenceError
from host.sessions.remote import RemoteMessage
from host.subagents.types import ChildRequest
from host.testing import HostHarness
from tests.support import soon
from tool_subagent_control import root as control_root

TAKE_OVER = """
UPDATE {schema}.leases
   SET owner = 'intruder:1:0', epoch = epoch + 1, expires_at = now() + interval '1 hour'
 WHERE session_id = %s
"""
"""Another host took the session's lease: the row as its acquisition leaves it."""


@pytest.fixture
def take_over(dsn: str, schema: str, monkeypatch) -> Callable[[str], None]:
    """Another host takes ``session_id`` over, after this host's clock passed the TTL."""
    clock = leases.clock

    def taken(session_id: str) -> None:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(TAKE_OVER.format(schema=schema), (session_id,))
        monkeypatch.setattr(leases, "clock", lambda: clock() + 3600)

    return taken


def queued(dsn: str, schema: str) -> list[str]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(f"SELECT message_id FROM {schema}.remote_inbox ORDER BY seq")
        return [str(row[0]) for row in rows.fetchall()]


def note(message_id: str, sender: str) -> RemoteMessage:
    return RemoteMessage(message_id, "target", "followup", "hi", None, sender)


@pytest.fixture
def hosts(dsn: str, schema: str) -> Iterator[tuple[PostgresPersistence, PostgresPersistence]]:
    """Two hosts over one schema; the second holds session ``target``."""
    a, b = PostgresPersistence(dsn, schema=schema), PostgresPersistence(dsn, schema=schema)
    target = b.open_writer(SessionHeader(id="target"), create=True)
    yield a, b
    target.close()
    a.close()
    b.close()


async def test_a_sender_taken_over_queues_nothing(hosts, dsn, schema, take_over) -> None:
    """The statement that queues a message checks the sender's lease epoch: held by this
    host, it queues; taken over since (even while this host's writer is still open and
    unaware), it queues nothing and says LOCKED — also once that writer closed."""
    a, _ = hosts
    sender = a.open_writer(SessionHeader(id="sender"), create=True)
    voice = sender.voice()
    assert await a.inbox.send_remote(note("rmsg_1", "sender"), voice) is True
    take_over("sender")
    for _ in range(2):  # open, then closed (its release matches nothing)
        with pytest.raises(PersistenceError) as err:
            await a.inbox.send_remote(note("rmsg_2", "sender"), voice)
        assert (err.value.code, err.value.message) == (
            "LOCKED",
            'session "sender" was taken over by another host since this host held it; '
            "nothing was sent on its behalf",
        )
        assert not await voice.holds()
        sender.close()
    assert queued(dsn, schema) == ["rmsg_1"]


async def test_a_release_in_order_is_final(hosts, dsn, schema) -> None:
    """A writer that released its lease in order keeps its voice whoever acquires the session
    after it: the child that settled here and was cold-resumed by another host before its
    notice left still sends it (in the statement, and in process)."""
    a, b = hosts
    sender = a.open_writer(SessionHeader(id="sender"), create=True)
    voice = sender.voice()
    sender.close()
    resumed = await b.resume("sender")  # a later, legitimate acquisition: the next epoch
    resumed.writer.append([Event(0, TurnStart(turn_id="t1"))])
    assert await voice.holds()
    assert await a.inbox.send_remote(note("rmsg_1", "sender"), voice) is True
    assert queued(dsn, schema) == ["rmsg_1"]
    resumed.writer.close()


async def test_a_release_retried_by_the_heartbeat_is_final(proxy, dsn, schema) -> None:
    """The database is away when the writer closes; once the heartbeat's retry gave the
    lease up in order, the voice holds for good, also after another host acquired it."""
    gate, via_proxy = proxy
    a = PostgresPersistence(via_proxy, schema=schema, connect_timeout=1, lease_ttl=600)
    b = PostgresPersistence(dsn, schema=schema)
    try:
        writer = a.open_writer(SessionHeader(id="s1", created_at=1), create=True)
        voice = writer.voice()
        gate.cut()
        writer.close()  # the release cannot reach the database
        gate.start()
        deadline = asyncio.get_running_loop().time() + 30
        while True:  # a beat (the heartbeat's, called here) retries the release
            try:
                a._holder.beat()
                break
            except Exception:
                assert asyncio.get_running_loop().time() < deadline, "never released"
                await asyncio.sleep(0.1)
        b.open_writer(SessionHeader(id="s1", created_at=1), create=False).close()
        assert await voice.holds()
    finally:
        a.close()
        b.close()


async def test_a_freshly_renewed_lease_is_not_read(dsn, schema, monkeypatch) -> None:
    """While the last renewal of an open writer's lease was sent less than the TTL ago, its
    voice holds without a round trip; past that, it reads the lease row again."""
    reads: list[str] = []
    speaks = leases.LeaseHolder.speaks

    def counted(holder: leases.LeaseHolder, session_id: str, epoch: int) -> bool:
        reads.append(session_id)
        return speaks(holder, session_id, epoch)

    monkeypatch.setattr(leases.LeaseHolder, "speaks", counted)
    a = PostgresPersistence(dsn, schema=schema, lease_ttl=600)  # no beat of its own
    try:
        writer = a.open_writer(SessionHeader(id="s1"), create=True)
        voice = writer.voice()
        assert await voice.holds() and reads == ["s1"]  # not renewed yet: read
        a._holder.beat()
        assert await voice.holds() and reads == ["s1"]
        clock = leases.clock
        monkeypatch.setattr(leases, "clock", lambda: clock() + 600)
        assert await voice.holds() and reads == ["s1", "s1"]
        writer.close()
    finally:
        a.close()


@pytest.fixture
def host(make_postgres_host: Callable[[str], HostHarness]) -> HostHarness:
    return make_postgres_host("a")


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
    host: HostHarness, take_over, caplog
) -> None:
    """The parent is still this host's; the child was taken over: its report is refused, its
    failed turn settles it here, but its settlement notice is one log line, not a message."""
    root = await host.root()
    child_id, release = await held_child(host, root.id)
    child = host.agents.get(child_id)
    assert child is not None
    before = list(root.session.events)
    take_over(child_id)

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


async def test_a_parent_taken_over_cannot_send_to_its_child(host: HostHarness, take_over) -> None:
    """``send_message`` from a parent another host took over reaches no child here."""
    root = await host.root()
    child_id, release = await held_child(host, root.id)
    child = host.agents.get(child_id)
    assert child is not None
    before = list(child.session.events)
    take_over(root.id)
    with pytest.raises(HostError) as err:
        await host.subagents.followup(root, child_id, "from a lost parent", source=None)
    assert err.value.code == "LOCKED" and f'session "{root.id}"' in err.value.message
    assert list(child.session.events) == before
    release.set()


def lease_of(dsn: str, schema: str, session_id: str) -> tuple[object, ...] | None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        query = f"SELECT owner, epoch FROM {schema}.leases WHERE session_id = %s"
        return conn.execute(query, (session_id,)).fetchone()


async def test_a_parent_taken_over_resumes_no_child(
    host: HostHarness, dsn, schema, take_over, caplog
) -> None:
    """A followup this host would deliver itself (an orphan it queued) from a parent another
    host took over is refused before the child is resumed: the child's lease stays as it
    was. The orphan itself is dropped here after one log line, not retried."""
    root = await host.root()
    child_id, release = await held_child(host, root.id)
    release.set()
    await host.settled(child_id, root)
    lease = lease_of(dsn, schema, child_id)
    take_over(root.id)
    manager = host.subagents.manager()
    with pytest.raises(HostError) as err:
        await manager.followup(
            root, child_id, "late", source=None, signal=None, message_id="rmsg_1"
        )
    assert err.value.code == "LOCKED" and f'session "{root.id}"' in err.value.message
    assert lease_of(dsn, schema, child_id) == lease

    assert manager.remote is not None
    orphan = RemoteMessage("rmsg_2", child_id, "followup", "late", None, root.id)
    caplog.set_level(logging.WARNING)
    for _ in range(3):  # later passes find it dropped
        await manager.remote.deliver_orphan(orphan)
    assert [r.getMessage() for r in caplog.records if "rmsg_2" in r.getMessage()] == [
        f"queued message rmsg_2 not delivered: {err.value.message} (LOCKED)"
    ]
    assert lease_of(dsn, schema, child_id) == lease


async def test_a_notice_waits_for_the_database_rather_than_being_lost(
    proxy, schema, tmp_path, monkeypatch, caplog
) -> None:
    """The database is away when a child settles: its notice cannot check the child's voice,
    so it waits (one log line) and reaches the parent once the database is back."""
    gate, via_proxy = proxy
    monkeypatch.setenv(DSN_ENV, via_proxy)
    settings = {"schema": schema, "connect_timeout": 1, "lease_ttl": 600}
    host = HostHarness(
        ("postgres", agent_host_postgres),
        ("subagent_control", control_root),
        data_dir=tmp_path / "a",
        config={"plugins": {"postgres": settings}},
    )
    try:
        root = await host.root()
        child_id, release = await held_child(host, root.id)
        caplog.set_level(logging.WARNING)
        gate.cut()
        release.set()  # the child's turn cannot be stored: it fails and settles
        waits = f"settlement notice of subagent {child_id} waits"
        assert await soon(
            lambda: any(r.getMessage().startswith(waits) for r in caplog.records), timeout=30
        )
        gate.start()
        await host.settled(child_id)
        notices = [r for r in caplog.records if r.getMessage().startswith(waits)]
        assert len(notices) == 1
        assert await soon(
            lambda: any(child_id in str(e.body) for e in root.session.events), timeout=30
        )
    finally:
        await host.close()
