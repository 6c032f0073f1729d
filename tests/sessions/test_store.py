"""The live session store and projections, over real JSONL persistence."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from host.cancel import CancelSignal
from host.sessions.jsonl import JsonlPersistence
from host.sessions.model import (
    Event,
    InboxAccepted,
    MessageEvent,
    PluginEvent,
    SessionHeader,
    SessionIdError,
    SubagentDescriptorEvent,
    TurnEnd,
    TurnStart,
)
from host.sessions.persistence import PersistenceError, Resumed, StoredSession
from host.sessions.projections import (
    ProjectionError,
    ProjectionFailure,
    Projections,
    ProjectionUnit,
)
from host.sessions.store import SessionError, SessionStore
from tests.support import user


class RecordingPersistence:
    """Wraps real persistence and counts every read call."""

    def __init__(self, inner: JsonlPersistence) -> None:
        self.inner = inner
        self.reads: Counter[str] = Counter()
        self.opened: list[bool] = []  # the create flag of every open_writer

    def open_writer(self, header: SessionHeader, *, create: bool, events: Sequence[Event] = ()):
        self.opened.append(create)
        return self.inner.open_writer(header, create=create, events=events)

    async def list(self, *, signal: CancelSignal | None = None) -> list[SessionHeader]:
        self.reads["list"] += 1
        return await self.inner.list(signal=signal)

    async def inspect(
        self, session_id: str, *, signal: CancelSignal | None = None
    ) -> StoredSession:
        self.reads["inspect"] += 1
        return await self.inner.inspect(session_id, signal=signal)

    async def resume(self, session_id: str, *, signal: CancelSignal | None = None) -> Resumed:
        self.reads["resume"] += 1
        return await self.inner.resume(session_id, signal=signal)


def count_messages(state: int, event: Event) -> int:
    return state + (event.kind == "message")


def explode_on_plugin(state: list[str], event: Event) -> list[str]:
    if isinstance(event.body, PluginEvent):
        raise RuntimeError("boom")
    return [*state, event.kind]


COUNT = ProjectionUnit(key="count", initial=0, fold=count_messages)
KINDS = ProjectionUnit(key="kinds", initial=list, fold=explode_on_plugin)


@pytest.fixture
def recording(data_dir: Path) -> RecordingPersistence:
    return RecordingPersistence(JsonlPersistence(data_dir))


@pytest.fixture
def projections() -> Projections:
    p = Projections()
    p.register(COUNT)
    p.register(KINDS)
    return p


@pytest.fixture
def store(recording: RecordingPersistence, projections: Projections) -> SessionStore:
    return SessionStore(recording, projections)


def test_unpublished_is_invisible_and_not_stored(store: SessionStore, data_dir: Path) -> None:
    session = store.new(SessionHeader(id="s1"), seed=[user("a")])
    session.append(user("b"))
    assert store.get("s1") is None and store.list() == []
    assert not data_dir.exists()
    store.publish(session)
    assert store.get("s1") is session
    session.append(user("c"))
    assert [e.seq for e in session.events] == [0, 1, 2]


async def test_publish_stores_everything_and_duplicates_fail(
    store: SessionStore, recording: RecordingPersistence
) -> None:
    session = store.new(SessionHeader(id="s1"), seed=[user("a")])
    session.append(user("b"))
    store.publish(session)
    stored = await recording.inner.inspect("s1")
    assert stored.events == tuple(session.events)
    with pytest.raises(SessionError) as err:
        store.publish(store.new(SessionHeader(id="s1")))
    assert err.value.code == "DUPLICATE_SESSION"
    store.release("s1")
    other = SessionStore(recording, None)  # same id already stored on disk
    with pytest.raises(SessionError) as err:
        other.publish(other.new(SessionHeader(id="s1")))
    assert err.value.code == "DUPLICATE_SESSION"
    assert other.get("s1") is None
    assert (await recording.inner.inspect("s1")).events == stored.events


def test_list_orders_by_created_at_then_id(store: SessionStore) -> None:
    for sid, created in [("b", 5), ("a", 5), ("c", 1), ("d", 9)]:
        store.publish(store.new(SessionHeader(id=sid, created_at=created)))
    assert [h.id for h in store.list()] == ["c", "a", "b", "d"]


def test_failed_publish_publishes_nothing(data_dir: Path, projections: Projections) -> None:
    store = SessionStore(JsonlPersistence(data_dir), projections)
    session = store.new(SessionHeader(id="s1"), seed=[PluginEvent("p", "t", data=object())])
    with pytest.raises(PersistenceError):
        store.publish(session)
    assert store.get("s1") is None and not session.published
    assert not (data_dir / "s1.jsonl").exists()
    assert not data_dir.exists()  # encoding failed before anything touched the disk


async def test_fork(store: SessionStore, recording: RecordingPersistence) -> None:
    parent = store.new(SessionHeader(id="p1", delegation_depth=1))
    store.publish(parent)
    parent.append(user("hello"))
    parent.append(SubagentDescriptorEvent({"version": 2}))
    child = store.fork("p1", new_id="c1")
    assert child.header.parent_session == "p1" and child.header.seed_length == 2
    assert child.header.origin is None and child.header.delegation_depth == 1
    assert [e.body for e in child.events] == [e.body for e in parent.events]
    assert child.own_events() == ()
    child.append(user("mine"))
    assert [e.seq for e in child.own_events()] == [2]
    assert (await recording.inner.inspect("c1")).header == child.header
    hidden = store.fork("p1", publish=False)
    assert store.get(hidden.id) is None and not recording.inner.path_for(hidden.id).exists()
    with pytest.raises(SessionError) as err:
        store.fork("nope")
    assert err.value.code == "NOT_LIVE"


def test_compaction_keeps_hidden_events(store: SessionStore) -> None:
    session = store.new(SessionHeader(id="s1"))
    store.publish(session)
    session.append(TurnStart("t1"))
    session.append(user("one"))
    session.append(InboxAccepted("m1", "followup", "later"))
    session.append(MessageEvent(role="assistant", content="two"))
    session.append(TurnEnd("t1", "completed"))
    compaction = store.compact("s1", "summary of one and two")
    assert compaction.body.through_seq == 4
    session.append(user("three"))
    assert len(session.events) == 7  # nothing removed
    assert sum(e.model_hidden for e in session.events) == 3
    seen = session.model_messages()
    assert [(m.role, m.content) for m in seen] == [
        ("user", "summary of one and two"),
        ("user", "three"),
    ]
    assert seen[0].source == {"kind": "compaction", "through_seq": 4}
    assert [
        m.content for m in store.new(SessionHeader(id="x"), seed=[user("a")]).model_messages()
    ] == ["a"]


async def test_resume_after_release(store: SessionStore) -> None:
    session = store.new(SessionHeader(id="s1"))
    store.publish(session)
    session.append(TurnStart("t1"))
    session.append(user("hi"))
    store.release("s1")
    store.release("s1")  # idempotent
    with pytest.raises(SessionError) as err:
        session.append(user("late"))
    assert err.value.code == "RELEASED"
    resumed = await store.resume("s1")
    assert resumed is store.get("s1") and resumed is not session
    assert resumed.events[-1].body == TurnEnd("t1", "interrupted")  # closed by load
    resumed.append(user("again"))
    with pytest.raises(SessionError) as err:
        await store.resume("s1")
    assert err.value.code == "ALREADY_LIVE"
    store.release("s1")
    assert [e.seq for e in (await store.resume("s1")).events] == [0, 1, 2, 3]


async def test_resume_takes_the_lock_once(
    store: SessionStore, recording: RecordingPersistence, data_dir: Path
) -> None:
    """One ``persistence.resume``: no ``load`` that locks and unlocks, then a second lock."""
    store.publish(store.new(SessionHeader(id="s1"), seed=[TurnStart("t1")]))
    store.release("s1")
    recording.reads.clear()
    recording.opened.clear()
    session = await store.resume("s1")
    assert recording.reads == Counter({"resume": 1}) and recording.opened == []
    session.append(user("continues the log it read"))
    assert [e.seq for e in session.events] == [0, 1, 2]
    with pytest.raises(PersistenceError) as err:
        await JsonlPersistence(data_dir).resume("s1")
    assert err.value.code == "LOCKED"


async def test_resume_errors(store: SessionStore, data_dir: Path) -> None:
    with pytest.raises(PersistenceError) as err:
        await store.resume("missing")
    assert err.value.code == "NOT_FOUND"
    for bad in ("../x", "a/b", "a\x00b", "a" * 4096, "", "-x"):
        with pytest.raises(SessionIdError):
            await store.resume(bad)
    assert not data_dir.exists()
    with pytest.raises(SessionError) as unusable:
        await SessionStore(None, None).resume("s1")
    assert unusable.value.code == "PERSISTENCE_UNAVAILABLE"


async def test_live_snapshot_reads_nothing_and_cold_restore_matches(
    store: SessionStore, recording: RecordingPersistence, projections: Projections
) -> None:
    session = store.new(SessionHeader(id="s1"), seed=[user("a")])
    store.publish(session)
    for i in range(5):
        session.append(user(f"m{i}"))
    session.append(TurnEnd("t", "completed"))
    live_count = await projections.snapshot("s1", "count", store=store, persistence=recording)
    live_kinds = await projections.snapshot("s1", "kinds", store=store, persistence=recording)
    assert live_count == 6 and live_kinds == ["message"] * 6 + ["turn/end"]
    assert sum(recording.reads.values()) == 0
    store.release("s1")
    cold = await projections.snapshot("s1", "count", store=store, persistence=recording)
    assert cold == live_count and recording.reads == Counter({"inspect": 1})
    resumed = await store.resume("s1")
    assert resumed.projection("kinds") == live_kinds


async def test_raising_unit_is_contained(
    store: SessionStore, recording: RecordingPersistence, projections: Projections
) -> None:
    bad = store.new(SessionHeader(id="bad"))
    good = store.new(SessionHeader(id="good"))
    store.publish(bad)
    store.publish(good)
    bad.append(user("x"))
    bad.append(PluginEvent("p", "p/t"))
    bad.append(user("y"))
    good.append(user("z"))
    assert bad.projection("kinds") == ProjectionFailure(unit="kinds", error="RuntimeError: boom")
    assert bad.projection("count") == 2  # the other unit is unaffected
    assert good.projection("kinds") == ["message"]
    store.release("bad")
    cold: Any = await projections.snapshot("bad", "kinds", persistence=recording)
    assert cold == ProjectionFailure(unit="kinds", error="RuntimeError: boom")


async def test_projection_registry(projections: Projections, store: SessionStore) -> None:
    with pytest.raises(ProjectionError) as err:
        projections.register(ProjectionUnit(key="count", initial=0, fold=count_messages))
    assert err.value.code == "DUPLICATE_PROJECTION"
    session = store.new(SessionHeader(id="s1"), seed=[user("a")])
    store.publish(session)
    late = ProjectionUnit(key="late", initial=lambda: 100, fold=count_messages)
    dispose = projections.register(late)
    session.append(user("b"))
    assert session.projection("late") == 102  # a late unit folds the whole log once
    dispose()
    dispose()
    with pytest.raises(ProjectionError) as err:
        session.projection("late")
    assert err.value.code == "UNKNOWN_PROJECTION"
    with pytest.raises(ProjectionError) as err:
        await projections.snapshot("nope", "count", store=store)
    assert err.value.code == "NOT_FOUND"
