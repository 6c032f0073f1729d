"""Appends through a ``QueuedWriter`` (a writer that commits in the background, as the
PostgreSQL store's does): awaited appends do not block the event loop, and however appends
are mixed — awaited, synchronous, failed, cancelled — the session adds exactly the committed
events, in ``seq`` order, and the log on disk says the same.

The writer here is the real JSONL writer behind a gate (``tests.gated_writer``): the test
decides when a background thread writes the next queued append (or fails it).
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from host.sessions.model import MessageEvent, SessionHeader
from host.sessions.persistence import PersistenceError, QueuedWriter
from host.sessions.store import Session, SessionStore
from tests.gated_writer import GatedPersistence, GatedWriter
from tests.support import contents, user


@pytest.fixture
def gated(tmp_path: Path) -> tuple[SessionStore, Session, GatedWriter]:
    persistence = GatedPersistence(tmp_path)
    store = SessionStore(persistence, None)
    session = store.new(SessionHeader(id="s1"))
    store.publish(session)
    writer = persistence.writers[0]
    assert isinstance(writer, QueuedWriter)
    return store, session, writer


async def stored_contents(store: SessionStore, session_id: str) -> list[str]:
    assert store.persistence is not None
    stored = await store.persistence.inspect(session_id)
    return [e.body.content for e in stored.events if isinstance(e.body, MessageEvent)]


async def test_an_awaited_append_is_seen_only_after_its_commit_and_the_loop_runs_meanwhile(
    gated: tuple[SessionStore, Session, GatedWriter],
) -> None:
    store, session, writer = gated
    seen: list[list[int]] = []
    store.observe(lambda _s, events: seen.append([e.seq for e in events]))
    pending = asyncio.ensure_future(session.append_async(user("one")))
    await asyncio.sleep(0.02)  # the loop is free while the write waits
    assert not pending.done() and len(session.events) == 0 and seen == []
    writer.step()
    event = await pending
    assert event.seq == 0 and contents(session) == ["one"] and seen == [[0]]
    assert await stored_contents(store, "s1") == ["one"]


async def test_concurrent_and_synchronous_appends_are_numbered_and_added_in_order(
    gated: tuple[SessionStore, Session, GatedWriter],
) -> None:
    store, session, writer = gated
    first = asyncio.ensure_future(session.append_all_async([user("a"), user("b")]))
    second = asyncio.ensure_future(session.append_async(user("c")))
    await asyncio.sleep(0)
    assert [events[0].seq for events, _ in writer.queue] == [0, 2]
    # a synchronous append queues behind them and waits for all three commits
    threading.Timer(0.05, lambda: [writer.step() for _ in range(3)]).start()
    third = session.append(user("d"))
    assert third.seq == 3
    assert contents(session) == ["a", "b", "c", "d"]  # the earlier ones already added
    assert [e.seq for e in await first] == [0, 1] and (await second).seq == 2
    assert [e.seq for e in session.events] == [0, 1, 2, 3]
    assert await stored_contents(store, "s1") == ["a", "b", "c", "d"]


async def test_a_failed_append_adds_nothing_fails_those_queued_behind_it_and_numbering_resumes(
    gated: tuple[SessionStore, Session, GatedWriter],
) -> None:
    store, session, writer = gated
    failing = asyncio.ensure_future(session.append_async(user("lost")))
    behind = asyncio.ensure_future(session.append_async(user("also lost")))
    await asyncio.sleep(0)
    writer.step(PersistenceError(PersistenceError.PERSISTENCE_FAILED, "disk gone")).result()
    with pytest.raises(PersistenceError, match="disk gone"):
        await failing
    # numbering restarts after what was written, even with a doomed append still queued
    after = asyncio.ensure_future(session.append_async(user("kept")))
    await asyncio.sleep(0)
    writer.step().result()  # the real writer refuses "also lost": its seq no longer follows
    with pytest.raises(PersistenceError) as refused:
        await behind
    assert refused.value.code == PersistenceError.PERSISTENCE_FAILED
    writer.step().result()
    assert (await after).seq == 0
    assert contents(session) == ["kept"]
    assert await stored_contents(store, "s1") == ["kept"]


async def test_cancelling_the_caller_waits_for_the_outcome_and_keeps_the_written_events(
    gated: tuple[SessionStore, Session, GatedWriter],
) -> None:
    store, session, writer = gated
    pending = asyncio.ensure_future(session.append_async(user("written anyway")))
    await asyncio.sleep(0)
    pending.cancel()
    await asyncio.sleep(0.02)
    assert not pending.done()  # still waiting for the write it cannot take back
    writer.step()
    with pytest.raises(asyncio.CancelledError):
        await pending
    assert contents(session) == ["written anyway"]
    threading.Timer(0.05, writer.step).start()
    assert session.append(user("next")).seq == 1
    assert await stored_contents(store, "s1") == ["written anyway", "next"]


async def test_releasing_a_session_waits_for_its_appends_in_flight(
    gated: tuple[SessionStore, Session, GatedWriter],
) -> None:
    store, session, writer = gated
    pending = asyncio.ensure_future(session.append_async(user("in flight")))
    await asyncio.sleep(0)
    threading.Timer(0.05, writer.step).start()
    store.release("s1")
    assert contents(session) == ["in flight"]
    assert (await pending).seq == 0
    assert await stored_contents(store, "s1") == ["in flight"]


async def test_a_cancelled_caller_whose_write_fails_sees_the_cancel_and_nothing_is_added(
    gated: tuple[SessionStore, Session, GatedWriter],
) -> None:
    store, session, writer = gated
    pending = asyncio.ensure_future(session.append_async(user("refused")))
    await asyncio.sleep(0)
    pending.cancel()
    await asyncio.sleep(0.02)
    writer.step(PersistenceError(PersistenceError.PERSISTENCE_FAILED, "disk gone"))
    with pytest.raises(asyncio.CancelledError):
        await pending
    assert len(session.events) == 0
    threading.Timer(0.05, writer.step).start()
    assert session.append(user("next")).seq == 0
    assert await stored_contents(store, "s1") == ["next"]
