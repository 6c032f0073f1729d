"""Fenced leases between hosts: exclusivity, takeover after expiry, fencing, heartbeat, status.

Two ``PostgresPersistence`` instances over one schema are two hosts (each has its own host id,
pool and heartbeat); the paused-process case runs a real second process and SIGSTOPs it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

import psycopg
import pytest
from agent_host_postgres.persistence import PostgresPersistence

from host.sessions.loading import load, resume
from host.sessions.model import (
    Event,
    InboxAccepted,
    SessionHeader,
    TurnEnd,
    TurnStart,
)
from host.sessions.persistence import PersistenceError
from host.sessions.remote import RemoteMessage
from tests.support import message

TTL = 1.0


@pytest.fixture
def hosts(dsn: str, schema: str) -> Iterator[tuple[PostgresPersistence, PostgresPersistence]]:
    a = PostgresPersistence(dsn, schema=schema, lease_ttl=TTL)
    b = PostgresPersistence(dsn, schema=schema, lease_ttl=TTL)
    yield a, b
    a.close()
    b.close()


def expire(dsn: str, schema: str, session_id: str) -> None:
    """Move a lease's expiry into the past, as a missed heartbeat would."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            f"UPDATE {schema}.leases SET expires_at = now() - interval '1 second'"
            " WHERE session_id = %s",
            (session_id,),
        )


def expiry(dsn: str, schema: str, session_id: str) -> datetime:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            f"SELECT expires_at FROM {schema}.leases WHERE session_id = %s", (session_id,)
        ).fetchone()
    assert row is not None
    return row[0]


def db_now(dsn: str) -> datetime:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute("SELECT now()").fetchone()
    assert row is not None
    return row[0]


def lease_row(dsn: str, schema: str, session_id: str) -> tuple[str | None, int]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            f"SELECT owner, epoch FROM {schema}.leases WHERE session_id = %s", (session_id,)
        ).fetchone()
    assert row is not None
    return row[0], int(row[1])


async def test_a_live_lease_locks_out_other_hosts(hosts) -> None:
    a, b = hosts
    header = SessionHeader(id="s1")
    writer = a.open_writer(header, create=True)
    for attempt in (
        lambda: b.open_writer(header, create=False),
        lambda: a.open_writer(header, create=False),
    ):
        with pytest.raises(PersistenceError) as err:
            attempt()
        assert err.value.code == "LOCKED"
    with pytest.raises(PersistenceError) as err:
        await load(b, "s1")
    assert err.value.code == "LOCKED"
    writer.close()
    b.open_writer(header, create=False).close()


async def test_takeover_after_expiry_fences_the_old_holder(hosts, dsn, schema) -> None:
    a, b = hosts
    header = SessionHeader(id="s1")
    old = a.open_writer(header, create=True, events=[message(0, "from a")])
    expire(dsn, schema, "s1")
    stored = await load(b, "s1")
    new = b.open_writer(stored.header, create=False)
    assert new.epoch > old.epoch
    new.append([message(1, "from b")])
    with pytest.raises(PersistenceError) as err:
        old.append([message(1, "late from a")])
    assert err.value.code == "LOCKED" and "taken over" in err.value.message
    with pytest.raises(PersistenceError) as err:  # and it stays refused
        old.append([message(1, "again")])
    assert err.value.code == "LOCKED"
    old.close()  # releasing a lost lease leaves the new holder's lease alone
    assert lease_row(dsn, schema, "s1") == (b.host_id, new.epoch)
    new.append([message(2, "still b")])
    new.close()
    contents = [e.body.content for e in (await a.inspect("s1")).events]
    assert contents == ["from a", "from b", "still b"]


async def test_heartbeat_keeps_a_lease_past_its_ttl(dsn, schema) -> None:
    # A longer TTL than the other tests: heartbeats come every TTL/3 = 1 s, so a lease survives
    # a heartbeat that a loaded machine delays by up to 2 s.
    a = PostgresPersistence(dsn, schema=schema, lease_ttl=3.0)
    b = PostgresPersistence(dsn, schema=schema, lease_ttl=3.0)
    try:
        header = SessionHeader(id="s1")
        writer = a.open_writer(header, create=True)
        first_expiry = expiry(dsn, schema, "s1")
        # Bounded: the database clock passes the lease's first expiry (a heartbeat renewed it
        # or it lapsed); waits without blocking the loop.
        for _ in range(600):
            if db_now(dsn) > first_expiry:
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the database clock never passed the first expiry")
        assert expiry(dsn, schema, "s1") > db_now(dsn)  # renewed: still live past its TTL
        with pytest.raises(PersistenceError) as err:
            b.open_writer(header, create=False)
        assert err.value.code == "LOCKED"
        writer.append([message(0, "still mine")])
        writer.close()
    finally:
        a.close()
        b.close()


def test_a_renewal_never_waits_for_a_lease_row_another_statement_holds(dsn, schema) -> None:
    """A group of appends locks several lease rows; a renewal that waited for one of them
    while holding others could deadlock with it. It skips rows it cannot lock at once (their
    holder renews them) and renews the rest."""
    host = PostgresPersistence(dsn, schema=schema, lease_ttl=60.0)
    try:
        writers = [host.open_writer(SessionHeader(id=f"s{i}"), create=True) for i in range(2)]
        before = {sid: expiry(dsn, schema, sid) for sid in ("s0", "s1")}
        with psycopg.connect(dsn) as other:  # a transaction holding s0's lease row
            other.execute(
                f"SELECT 1 FROM {schema}.leases WHERE session_id = 's0' FOR NO KEY UPDATE"
            )
            beat = threading.Thread(target=host._holder.beat)
            beat.start()
            beat.join(timeout=30)
            assert not beat.is_alive(), "the renewal waited for the locked row"
            other.rollback()
        assert expiry(dsn, schema, "s0") == before["s0"]  # skipped
        assert expiry(dsn, schema, "s1") > before["s1"]  # renewed
        for writer in writers:
            writer.close()
    finally:
        host.close()


async def test_a_closed_host_loses_its_leases_at_expiry(dsn, schema) -> None:
    a = PostgresPersistence(dsn, schema=schema, lease_ttl=TTL)
    b = PostgresPersistence(dsn, schema=schema, lease_ttl=TTL)
    try:
        header = SessionHeader(id="s1")
        a.open_writer(header, create=True)  # never closed: the host stops heartbeating
        a.close()
        with pytest.raises(PersistenceError) as err:
            b.open_writer(header, create=False)
        assert err.value.code == "LOCKED"
        time.sleep(TTL + 0.3)
        b.open_writer(header, create=False).close()
    finally:
        b.close()


async def test_epochs_only_grow(hosts, dsn, schema) -> None:
    a, b = hosts
    header = SessionHeader(id="s1")
    epochs: list[int] = []
    for host in (a, b, a, b):
        writer = host.open_writer(header, create=not epochs)
        epochs.append(writer.epoch)
        writer.close()
        assert lease_row(dsn, schema, "s1") == (None, writer.epoch)
    assert epochs == sorted(set(epochs))


async def test_residency_follows_turns_and_releases(hosts) -> None:
    a, b = hosts
    writer = a.open_writer(SessionHeader(id="s1"), create=True)
    b.open_writer(SessionHeader(id="s2"), create=True).close()
    assert await b.inbox.residency(["s1", "s2", "s3"]) == {"s1": "idle"}
    writer.append([Event(0, TurnStart(turn_id="t"))])
    assert await b.inbox.residency(["s1", "s2"]) == {"s1": "running"}
    writer.append([message(1, "x"), Event(2, TurnEnd(turn_id="t", stop_reason="completed"))])
    assert await b.inbox.residency(["s1"]) == {"s1": "idle"}
    writer.close()
    assert await b.inbox.residency(["s1"]) == {}
    assert await b.inbox.residency([]) == {}


async def test_load_repairs_under_a_lease_and_releases_it(hosts, dsn, schema) -> None:
    a, b = hosts
    a.open_writer(
        SessionHeader(id="s1"), create=True, events=[Event(0, TurnStart(turn_id="t"))]
    ).close()
    stored = await load(b, "s1")
    assert stored.closed_turn == "t"
    owner, _ = lease_row(dsn, schema, "s1")
    assert owner is None  # load takes the lease only for its repair


async def test_a_resume_acquires_the_lease_once_and_its_writer_keeps_it(
    hosts, dsn, schema
) -> None:
    """One acquisition (one epoch) serves the read, the repair and the writer."""
    a, b = hosts
    a.open_writer(
        SessionHeader(id="s1"), create=True, events=[Event(0, TurnStart(turn_id="t"))]
    ).close()
    assert lease_row(dsn, schema, "s1") == (None, 1)
    resumed: Any = await resume(b, "s1")  # the backend's own writer
    assert resumed.stored.closed_turn == "t"
    assert resumed.writer.epoch == 2 and lease_row(dsn, schema, "s1") == (b.host_id, 2)
    resumed.writer.append([message(2, "continues")])
    resumed.writer.close()
    assert lease_row(dsn, schema, "s1") == (None, 2)


def test_a_paused_process_cannot_write_after_a_takeover(dsn, schema) -> None:
    """SIGSTOP the holder past expiry, take over, SIGCONT: its next append is refused."""
    code = textwrap.dedent(
        f"""
        import sys
        from agent_host_postgres.persistence import PostgresPersistence
        from host.sessions.model import Event, MessageEvent, SessionHeader
        from host.sessions.persistence import PersistenceError
        p = PostgresPersistence({dsn!r}, schema={schema!r}, lease_ttl={TTL})
        w = p.open_writer(SessionHeader(id="s1", created_at=1), create=True)
        print("held", flush=True)
        sys.stdin.readline()
        try:
            w.append([Event(0, MessageEvent(role="user", content="after pause"))])
            print("appended", flush=True)
        except PersistenceError as exc:
            print(exc.code, flush=True)
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    b = PostgresPersistence(dsn, schema=schema, lease_ttl=TTL)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        os.kill(child.pid, signal.SIGSTOP)
        time.sleep(TTL + 0.5)
        writer = b.open_writer(SessionHeader(id="s1", created_at=1), create=False)
        writer.append([message(0, "from b")])
        os.kill(child.pid, signal.SIGCONT)
        out, _ = child.communicate("\n", timeout=30)
        assert out.strip() == "LOCKED"
        writer.close()
    finally:
        if child.poll() is None:
            child.kill()
        b.close()
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(f"SELECT body FROM {schema}.events WHERE session_id = 's1'").fetchall()
    assert len(rows) == 1 and "from b" in rows[0][0]


async def test_a_queued_message_is_accepted_at_most_once(hosts, dsn, schema) -> None:
    """Accepting a queued message removes it in the same statement; accepting it again (as
    a second holder racing the first would) writes nothing."""
    a, b = hosts
    target = a.open_writer(SessionHeader(id="s1"), create=True)
    b.open_writer(SessionHeader(id="sender"), create=True).close()
    queued = RemoteMessage("rmsg_1", "s1", "followup", "hi", {"kind": "test"}, "sender")
    assert await b.inbox.send_remote(queued, None) is True
    assert [m.message_id for m in await a.inbox.pending_remote()] == ["rmsg_1"]
    accept = Event(0, InboxAccepted("rmsg_1", "followup", "hi", {"kind": "test"}))
    target.append([accept])
    assert await a.inbox.pending_remote() == []
    with pytest.raises(PersistenceError) as err:
        target.append([Event(1, InboxAccepted("rmsg_1", "followup", "hi", None))])
    assert err.value.code == "PERSISTENCE_FAILED" and "already delivered" in err.value.message
    target.append([message(1, "still writable")])  # the refusal wrote nothing
    target.close()
    assert [e.seq for e in (await b.inspect("s1")).events] == [0, 1]


async def test_nothing_is_queued_for_a_session_nobody_else_holds(hosts) -> None:
    a, b = hosts
    a.open_writer(SessionHeader(id="s1"), create=True).close()
    mine = a.open_writer(SessionHeader(id="s2"), create=True)
    for target in ("s1", "s2"):  # released, and held by the sender itself
        message_ = RemoteMessage(f"rmsg_{target}", target, "followup", "x", None, None)
        assert await a.inbox.send_remote(message_, None) is False
    assert await b.inbox.pending_remote() == [] and await a.inbox.pending_remote() == []
    mine.close()


async def test_a_queued_message_wakes_only_the_host_holding_its_target(dsn, schema) -> None:
    """The notification names the holder: another listening host is not woken (it would run
    a query for nothing)."""
    a, b, c = (PostgresPersistence(dsn, schema=schema, lease_ttl=30.0) for _ in range(3))
    wakes = {"a": 0, "c": 0}
    woken_by_message = threading.Event()

    def waker(name: str) -> Callable[[], None]:
        def wake() -> None:
            wakes[name] += 1
            if name == "a" and wakes[name] == 2:
                woken_by_message.set()

        return wake

    try:
        target = a.open_writer(SessionHeader(id="s1"), create=True)
        for host, name in ((a, "a"), (c, "c")):
            host.inbox.poll_interval = 60.0  # no periodic wake during the test
            host.inbox.watch(waker(name))
        deadline = time.monotonic() + 10
        while min(wakes.values()) < 1:  # each listener wakes once when it starts listening
            assert time.monotonic() < deadline, "listeners did not start"
            time.sleep(0.01)
        queued = RemoteMessage("rmsg_1", "s1", "followup", "hi", None, None)
        assert await b.inbox.send_remote(queued, None) is True
        assert woken_by_message.wait(10)
        time.sleep(0.5)  # c got the same notification at the same time, had it acted on it
        assert wakes == {"a": 2, "c": 1}
        target.close()
    finally:
        for host in (a, b, c):
            host.close()


async def test_a_session_created_off_the_event_loop_holds_its_lease(
    hosts: tuple[PostgresPersistence, PostgresPersistence],
) -> None:
    a, b = hosts
    header = SessionHeader(id="s1")
    writer = await a.create_async(header)
    with pytest.raises(PersistenceError) as locked:
        b.open_writer(header, create=False)
    assert locked.value.code == PersistenceError.LOCKED
    writer.close()
    b.open_writer(header, create=False).close()


async def test_a_creation_cancelled_while_it_inserts_releases_its_lease(
    hosts: tuple[PostgresPersistence, PostgresPersistence], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The insert on the worker thread is not withdrawn: the caller's ``CancelledError`` comes
    once it committed, the session stays stored and its lease is released."""
    a, b = hosts
    inserting, go_on = threading.Event(), threading.Event()
    real = a._insert_new

    def held(*args: Any) -> int:
        inserting.set()
        assert go_on.wait(30.0)
        return real(*args)

    monkeypatch.setattr(a, "_insert_new", held)
    header = SessionHeader(id="s1")
    creating = asyncio.ensure_future(a.create_async(header))
    assert await asyncio.to_thread(inserting.wait, 30.0)
    creating.cancel()
    go_on.set()
    with pytest.raises(asyncio.CancelledError):
        await creating
    assert (await b.inspect("s1")).header == header
    b.open_writer(header, create=False).close()  # not LOCKED: the lease was released
