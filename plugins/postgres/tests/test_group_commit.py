"""Group commit: appends of one host's sessions that arrive together are written by one
transaction, each acknowledged after it; one session's lost lease fails only its own."""

from __future__ import annotations

import asyncio

import psycopg
import pytest
from agent_host_postgres.persistence import PostgresPersistence

from host.sessions.model import SessionHeader
from host.sessions.persistence import PersistenceError
from host.sessions.store import Session, SessionStore
from tests.support import user


async def appending(session: Session, count: int) -> None:
    for n in range(count):
        await session.append_async(user(f"{session.id} {n}"))


@pytest.mark.parametrize("lanes", [1, 2])
async def test_agents_appending_at_once_share_commits_and_every_append_is_stored(
    dsn: str, schema: str, lanes: int
) -> None:
    persistence = PostgresPersistence(dsn, schema=schema, append_lanes=lanes)
    store = SessionStore(persistence, None)
    sessions = [store.new(SessionHeader(id=f"a{i}", created_at=i)) for i in range(10)]
    try:
        for session in sessions:
            store.publish(session)
        await asyncio.gather(*(appending(session, 20) for session in sessions))
        for session in sessions:
            stored = await persistence.inspect(session.id)
            assert stored.events == tuple(session.events)
            assert [e.seq for e in stored.events] == list(range(20))
    finally:
        for session in sessions:
            store.release(session.id)
        persistence.close()
    with psycopg.connect(dsn, autocommit=True) as conn:  # rows one transaction wrote share xmin
        row = conn.execute(
            f"SELECT count(*), max(n) FROM (SELECT count(DISTINCT session_id) AS n"
            f" FROM {schema}.events GROUP BY xmin::text) AS by_transaction"
        ).fetchone()
    assert row is not None
    transactions, most_sessions_in_one = row
    assert transactions < 200 / 2  # 200 appends, mostly written together
    assert most_sessions_in_one > 1


async def test_a_lost_lease_fails_only_that_sessions_appends(dsn: str, schema: str) -> None:
    persistence = PostgresPersistence(dsn, schema=schema)
    store = SessionStore(persistence, None)
    kept, lost = (store.new(SessionHeader(id=sid, created_at=1)) for sid in ("kept", "lost"))
    try:
        store.publish(kept)
        store.publish(lost)
        with psycopg.connect(dsn, autocommit=True) as conn:  # another host took it over
            conn.execute(
                f"UPDATE {schema}.leases SET owner = 'other', epoch = epoch + 1"
                " WHERE session_id = 'lost'"
            )
        results = await asyncio.gather(
            kept.append_async(user("a")),
            lost.append_async(user("b")),
            kept.append_async(user("c")),
            return_exceptions=True,
        )
        assert isinstance(results[1], PersistenceError) and results[1].code == "LOCKED"
        assert [e.body.content for e in kept.events] == ["a", "c"]
        assert len(lost.events) == 0
        with pytest.raises(PersistenceError) as again:
            lost.append(user("d"))
        assert again.value.code == "LOCKED"
        assert (await persistence.inspect("lost")).events == ()
        with pytest.raises(PersistenceError):  # its last commit cannot be made either
            store.release("lost")
    finally:
        store.release("kept")
        persistence.close()


async def test_an_append_the_database_refuses_fails_alone_and_the_rest_of_its_group_commits(
    dsn: str, schema: str, held_commits
) -> None:
    """A row already stored where one session's next event goes (written behind the host's
    back) makes the group's statement fail; the group is written again one append at a
    time, so only that session's append fails."""
    persistence = PostgresPersistence(dsn, schema=schema, append_lanes=1)
    store = SessionStore(persistence, None)
    sessions = [store.new(SessionHeader(id=f"r{i}", created_at=i)) for i in range(4)]
    try:
        for session in sessions:
            store.publish(session)
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(
                f"INSERT INTO {schema}.events (session_id, seq, body) VALUES ('r2', 0, 'x')"
            )
        results = await held_commits.one_group(sessions[0], sessions[1:], user("next"))
        assert held_commits.groups == [3]
        assert held_commits.singles == ["r0", "r1", "r2", "r3"]  # the group, one at a time
        refused = results[1]
        assert isinstance(refused, PersistenceError) and refused.code == "PERSISTENCE_FAILED"
        assert "duplicate key" in refused.message and "\n" not in refused.message
        assert [r.seq for r in (results[0], results[2])] == [0, 0]
        assert [len(s.events) for s in sessions] == [1, 1, 0, 1]
    finally:
        for session in sessions:
            store.release(session.id)
        persistence.close()
