"""Faults and bad input on PostgreSQL: the database going away mid-run (between appends and
in the middle of a group commit), an older schema, hostile connection strings. Each is a
clear error, and no acknowledged event is lost."""

from __future__ import annotations

import asyncio
import logging
import select
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import agent_host_postgres
import psycopg
import pytest
from agent_host_postgres import DSN_ENV
from agent_host_postgres.connections import check_connection
from agent_host_postgres.persistence import PostgresPersistence
from agent_host_postgres.schema import LATEST, MIGRATIONS
from agent_host_postgres.writer import encode_bodies
from psycopg_pool import ConnectionPool

from host.sessions.codec import encode_header
from host.sessions.loading import load
from host.sessions.model import Event, InboxAccepted, SessionHeader
from host.sessions.persistence import PersistenceError
from host.sessions.remote import QUEUED_PREFIX
from host.sessions.store import SessionStore
from host.testing import HostHarness
from tests.support import contents, message, user

T = TypeVar("T")


async def eventually(call: Callable[[], Awaitable[T]], timeout: float = 30.0) -> T:
    """``call()``'s result once it stops failing with ``PERSISTENCE_FAILED`` (the pool backs
    off between reconnection attempts, so the first calls after an outage may still fail)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        try:
            return await call()
        except PersistenceError as error:
            if error.code != "PERSISTENCE_FAILED":
                raise
            if asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(0.2)


async def test_the_database_going_away_mid_run_and_coming_back(proxy, schema) -> None:
    gate, dsn = proxy
    persistence = PostgresPersistence(dsn, schema=schema, connect_timeout=2)
    try:
        writer = persistence.open_writer(SessionHeader(id="s1", created_at=1), create=True)
        writer.append([message(0, "before")])
        gate.cut()
        with pytest.raises(PersistenceError) as err:
            writer.append([message(1, "while away")])
        assert err.value.code == "PERSISTENCE_FAILED"
        assert "\n" not in err.value.message
        with pytest.raises(PersistenceError) as err:
            await persistence.list()
        assert err.value.code == "PERSISTENCE_FAILED"
        gate.start()
        back = await eventually(lambda: persistence.inspect("s1"))  # the pool reconnects
        assert [e.body.content for e in back.events] == ["before"]
        writer.append([message(1, "after")])
        writer.close()
        stored = await persistence.inspect("s1")
        assert [e.body.content for e in stored.events] == ["before", "after"]
    finally:
        persistence.close()


async def test_a_database_lost_mid_group_commit_fails_that_whole_batch_and_writers_recover(
    proxy, dsn, schema, held_commits
) -> None:
    """Four sessions' appends are committed together, and the connection drops once the
    server answered, so the batch is stored but its answer lost: each append fails on one
    line, none is acknowledged, and once the database is back each writer clears what the
    lost commit stored and goes on — the stored logs are exactly the acknowledged events."""
    gate, via_proxy = proxy
    persistence = PostgresPersistence(
        via_proxy,
        schema=schema,
        connect_timeout=2,
        append_lanes=1,  # all in one group
    )
    store = SessionStore(persistence, None)
    sessions = [store.new(SessionHeader(id=f"g{i}", created_at=i)) for i in range(5)]

    def cut(size: int) -> None:  # its statement answers "SELECT 4" (a row per session), sent
        if held_commits.groups == [4]:  # with the ready-for-query after the commit
            gate.cut_at_answer(b"SELECT 4\x00")

    held_commits.on_group = cut
    try:
        for session in sessions:
            store.publish(session)
            session.append(user("before"))
        held_commits.singles.clear()
        failures = await held_commits.one_group(sessions[0], sessions[1:], user("lost"))
        assert held_commits.groups == [4]
        for failure in failures:
            assert isinstance(failure, PersistenceError), failure
            assert failure.code == "PERSISTENCE_FAILED"
            assert "\n" not in failure.message
        assert [contents(s) for s in sessions] == [["before", "lost"]] + [["before"]] * 4
        with psycopg.connect(dsn, autocommit=True) as conn:  # the lost commit did happen
            row = conn.execute(
                f"SELECT count(*) FROM {schema}.events WHERE seq = 1 AND session_id <> 'g0'"
            ).fetchone()
        assert row == (4,)

        gate.start()
        await eventually(lambda: persistence.inspect("g0"))  # the pool reconnects
        # together again, each clearing what the lost commit stored, none retried alone
        assert await held_commits.one_group(sessions[0], sessions[1:], user("after")) == [
            s.events[1] for s in sessions[1:]
        ]
        assert held_commits.groups == [4, 4] and held_commits.singles == ["g0", "g0"]
        expected = [["before", "lost", "after"]] + [["before", "after"]] * 4
        assert [contents(s) for s in sessions] == expected
        for session in sessions:
            store.release(session.id)
    finally:
        persistence.close()
    fresh = PostgresPersistence(dsn, schema=schema)
    try:
        stored = [await fresh.inspect(s.id) for s in sessions]
        assert [[e.body.content for e in st.events] for st in stored] == expected
        assert [[e.seq for e in st.events] for st in stored] == [[0, 1, 2]] + [[0, 1]] * 4
    finally:
        fresh.close()


async def test_an_older_schema_is_migrated_and_its_sessions_stay_usable(dsn, schema) -> None:
    """A database written by the first release (schema version 1, no leases, no queue)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
        conn.execute(f"SET search_path TO {schema}")
        conn.execute(
            "CREATE TABLE schema_version (version integer PRIMARY KEY,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        conn.execute(MIGRATIONS[0][1])
        conn.execute("INSERT INTO schema_version (version) VALUES (1)")
    header = SessionHeader(id="old", created_at=5)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            f"INSERT INTO {schema}.sessions (id, parent_session, created_at, origin,"
            " delegation_depth, seed_length, header) VALUES ('old', NULL, 5, NULL, 0, 0, %s)",
            (encode_header(header).decode().rstrip("\n"),),
        )
        conn.execute(
            f"INSERT INTO {schema}.events (session_id, seq, body) VALUES ('old', 0, %s)",
            (encode_bodies([message(0, "written by v1")])[0],),
        )
    persistence = PostgresPersistence(dsn, schema=schema)
    try:
        assert persistence.schema_version == LATEST
        stored = await load(persistence, "old")
        writer = persistence.open_writer(stored.header, create=False)
        writer.append([message(1, "written now")])
        writer.close()
        contents = [e.body.content for e in (await persistence.inspect("old")).events]
        assert contents == ["written by v1", "written now"]
    finally:
        persistence.close()


@pytest.mark.parametrize(
    "hostile",
    [
        "not a connection string",
        "host=127.0.0.1 port=1 dbname=x'; DROP TABLE sessions; --",
        "postgresql://user:s3cret@127.0.0.1:1/db?connect_timeout=1",
    ],
)
async def test_a_hostile_or_broken_dsn_is_one_clear_line(
    hostile: str, schema: str, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv(DSN_ENV, hostile)
    harness = HostHarness(
        ("postgres", agent_host_postgres),
        data_dir=tmp_path / "data",
        config={"plugins": {"postgres": {"schema": schema}}},
    )
    try:
        with pytest.raises(PersistenceError) as err:
            harness.services.get("session_persistence")
        assert err.value.code == "PERSISTENCE_FAILED"
        message_text = err.value.message
        assert message_text.startswith("cannot prepare the PostgreSQL session store: ")
        assert "s3cret" not in message_text
        assert len(message_text.splitlines()) == 1
    finally:
        await harness.close()


async def test_a_release_that_failed_is_retried_and_never_renewed(proxy, dsn, schema) -> None:
    """The database is away when a writer closes: the lease is not kept alive by the
    heartbeat, and once the database is back the release goes through."""
    gate, via_proxy = proxy
    a = PostgresPersistence(via_proxy, schema=schema, connect_timeout=1, lease_ttl=1.0)
    b = PostgresPersistence(dsn, schema=schema, lease_ttl=1.0)
    try:
        writer = a.open_writer(SessionHeader(id="s1", created_at=1), create=True)
        gate.cut()
        writer.close()  # the release cannot reach the database; close still returns
        gate.start()

        def owner() -> object:
            with psycopg.connect(dsn, autocommit=True) as conn:
                row = conn.execute(
                    f"SELECT owner FROM {schema}.leases WHERE session_id = 's1'"
                ).fetchone()
            return None if row is None else row[0]

        deadline = asyncio.get_running_loop().time() + 20
        while owner() is not None:
            assert asyncio.get_running_loop().time() < deadline, "lease never released"
            await asyncio.sleep(0.1)
        b.open_writer(SessionHeader(id="s1", created_at=1), create=False).close()
    finally:
        a.close()
        b.close()


def terminate_backends(dsn: str, host_id: str) -> int:
    """Terminate every server backend of host ``host_id``'s pool, as a server restart would,
    and wait until they are gone."""
    query = "SELECT {} FROM pg_stat_activity WHERE application_name = %s"
    name = (f"agent-host {host_id}",)
    with psycopg.connect(dsn, autocommit=True) as conn:
        count = len(conn.execute(query.format("pg_terminate_backend(pid)"), name).fetchall())
        deadline = time.monotonic() + 30  # generous: a loaded machine is slow to reap them
        while conn.execute(query.format("pid"), name).fetchall():
            if time.monotonic() > deadline:
                raise AssertionError("the terminated backends did not go away")
            time.sleep(0.01)
    return count


def test_the_pool_check_sends_a_query_only_when_the_server_spoke(dsn, monkeypatch) -> None:
    sent: list[object] = []
    empty_query = ConnectionPool.check_connection

    def recorded(conn: psycopg.Connection[Any]) -> None:
        sent.append(conn)
        empty_query(conn)

    monkeypatch.setattr(ConnectionPool, "check_connection", staticmethod(recorded))
    with psycopg.connect(dsn, autocommit=True) as conn:
        for _ in range(3):
            check_connection(conn)  # healthy and idle: no round trip
        assert sent == []
        with psycopg.connect(dsn, autocommit=True) as other:
            other.execute("SELECT pg_terminate_backend(%s)", (conn.info.backend_pid,))
        select.select([conn.pgconn.socket], [], [], 10)
        with pytest.raises(psycopg.OperationalError):
            check_connection(conn)
        assert sent == [conn]


async def test_appends_and_reads_survive_terminated_backends(dsn, schema) -> None:
    """Every pooled connection's backend is killed between calls (a server restart): the
    check at checkout replaces them, so no call fails and the writer stays usable."""
    persistence = PostgresPersistence(dsn, schema=schema)
    try:
        writer = persistence.open_writer(SessionHeader(id="s1", created_at=1), create=True)
        for seq in range(3):
            assert terminate_backends(dsn, persistence.host_id) >= 1
            writer.append([message(seq, f"after restart {seq}")])
            assert terminate_backends(dsn, persistence.host_id) >= 1
            assert len((await persistence.inspect("s1")).events) == seq + 1
        writer.close()
    finally:
        persistence.close()


async def test_an_outage_logs_one_line_per_pool_message(proxy, schema, caplog) -> None:
    """libpq's messages span lines (the refusal, then a hint); each log record is one."""
    gate, dsn = proxy
    persistence = PostgresPersistence(dsn, schema=schema, connect_timeout=1)
    try:
        gate.cut()
        with caplog.at_level(logging.WARNING, logger="psycopg.pool"):
            with pytest.raises(PersistenceError):
                await persistence.list()
            await asyncio.sleep(1.5)  # the pool keeps trying to reconnect meanwhile
        pooled = [r for r in caplog.records if r.name == "psycopg.pool"]
        assert pooled, "the pool logged nothing during the outage"
        assert all("\n" not in r.getMessage() and not r.exc_info for r in pooled)
        assert any("Connection refused" in r.getMessage() for r in pooled)
    finally:
        gate.start()
        persistence.close()


async def test_an_append_that_found_no_connection_leaves_its_writer_usable(dsn, schema) -> None:
    """Every pooled connection busy: the append (one that accepts a queued cross-host message,
    the kind a lost answer would disable its writer for) fails without reaching the
    database, and the writer goes on."""
    persistence = PostgresPersistence(dsn, schema=schema, pool_size=1, connect_timeout=1)
    try:
        writer = persistence.open_writer(SessionHeader(id="s1", created_at=1), create=True)
        writer.append([message(0, "hello")])
        accepted = InboxAccepted(f"{QUEUED_PREFIX}x", "followup", "from another host")
        busy_pool = persistence._pool.connection()  # its only connection, held
        with busy_pool, pytest.raises(PersistenceError) as busy:
            writer.append([Event(1, accepted)])
        assert busy.value.code == "PERSISTENCE_FAILED"
        assert "couldn't get a connection" in busy.value.message
        writer.append([message(1, "after the pool is free")])
        stored = await persistence.inspect("s1")
        assert [e.body.content for e in stored.events] == ["hello", "after the pool is free"]
        writer.close()
    finally:
        persistence.close()


async def test_appends_numbered_after_a_failed_one_say_so(dsn, schema) -> None:
    persistence = PostgresPersistence(dsn, schema=schema)
    try:
        writer = persistence.open_writer(SessionHeader(id="s1", created_at=1), create=True)
        with psycopg.connect(dsn, autocommit=True) as conn:  # in the way of seq 0
            conn.execute(
                f"INSERT INTO {schema}.events (session_id, seq, body) VALUES ('s1', 0, 'x')"
            )
        first = writer.submit([message(0, "refused")])
        behind = writer.submit([message(1, "numbered after it")])
        with pytest.raises(PersistenceError, match="duplicate key"):
            first.result()
        with pytest.raises(PersistenceError) as refused:
            behind.result()
        assert refused.value.message.startswith(
            "cannot append to session 's1': an earlier append failed (cannot append to session"
        )
        writer.close()
    finally:
        persistence.close()
