"""Fixtures for the listing tests: real JSONL persistence, store and projections in tmp_path.

``Recording`` wraps the real persistence and counts ``inspect``/``list`` calls (and can make
chosen calls fail); nothing under test is mocked. ``World`` builds sessions through the real
store: live or settled (released) subagent children, ordinary forks, fork-seeded children.

The store and agents fixtures of ``tests.fixtures`` serve the continuable setup tests.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from host.cancel import CancelSignal
from host.sessions.jsonl import JsonlPersistence
from host.sessions.model import (
    Compaction,
    Event,
    EventBody,
    MessageEvent,
    SessionHeader,
    SubagentDescriptorEvent,
)
from host.sessions.persistence import PersistenceError, Resumed, StoredSession
from host.sessions.projections import Projections
from host.sessions.store import Session, SessionStore
from host.subagents.identity import IDENTITY_UNIT
from host.subagents.index import IdentityIndex
from host.subagents.listing import SubagentListing
from tests.fixtures import *  # noqa: F403 - the store and agents fixtures, for test_setup


def continuable(label: str = "worker", provider: str = "spawn") -> dict[str, Any]:
    return {"version": 2, "mode": "continuable", "provider": provider, "label": label}


def one_shot(label: str | None = None, provider: str = "spawn") -> dict[str, Any]:
    data: dict[str, Any] = {"version": 2, "mode": "one-shot", "provider": provider}
    if label is not None:
        data["label"] = label
    return data


class Recording:
    """The real persistence, with call counting and optional injected failures."""

    def __init__(self, inner: JsonlPersistence) -> None:
        self.inner = inner
        self.inspects: Counter[str] = Counter()
        self.lists = 0
        self.fail_inspect: set[str] = set()
        self.fail_list = False
        self.on_inspect: Any = None

    def open_writer(
        self, header: SessionHeader, *, create: bool, events: Sequence[Event] = ()
    ) -> Any:
        return self.inner.open_writer(header, create=create, events=events)

    async def list(self, *, signal: CancelSignal | None = None) -> list[SessionHeader]:
        self.lists += 1
        if self.fail_list:
            raise PersistenceError(PersistenceError.PERSISTENCE_FAILED, "disk on fire")
        return await self.inner.list(signal=signal)

    async def inspect(
        self, session_id: str, *, signal: CancelSignal | None = None
    ) -> StoredSession:
        self.inspects[session_id] += 1
        if self.on_inspect is not None:
            self.on_inspect(session_id)
        if session_id in self.fail_inspect:
            raise PersistenceError(PersistenceError.PERSISTENCE_FAILED, "read failed")
        return await self.inner.inspect(session_id, signal=signal)

    async def load(self, session_id: str, *, signal: CancelSignal | None = None) -> StoredSession:
        return await self.inner.load(session_id, signal=signal)

    async def resume(self, session_id: str, *, signal: CancelSignal | None = None) -> Resumed:
        return await self.inner.resume(session_id, signal=signal)

    @property
    def total_inspects(self) -> int:
        return sum(self.inspects.values())

    def reset(self) -> None:
        self.inspects.clear()
        self.lists = 0


class World:
    """A data directory with a real store; builds sessions and listings over it."""

    def __init__(self, root: Path) -> None:
        self.data_dir = root / "data"
        self.persistence = Recording(JsonlPersistence(self.data_dir, fsync="never"))
        self.projections = Projections()
        self.projections.register(IDENTITY_UNIT)
        self.store = SessionStore(self.persistence, self.projections)
        self.index_path = self.data_dir / ".index" / "identity.jsonl"
        self.index = IdentityIndex(self.index_path)
        self._clock = 1_000

    def tick(self) -> int:
        self._clock += 1_000
        return self._clock

    def listing(self, *, index: IdentityIndex | bool | None = True, **kw: Any) -> SubagentListing:
        """A listing over this world; ``index=False`` for none, ``True`` for the shared one."""
        chosen = self.index if index is True else (None if index is False else index)
        args: dict[str, Any] = {
            "sessions": self.store,
            "projections": self.projections,
            "persistence": self.persistence,
            "index": chosen,
        }
        args.update(kw)
        return SubagentListing(**args)

    def fresh_index(self) -> IdentityIndex:
        """A new index object over the same file (as another process would see it)."""
        return IdentityIndex(self.index_path)

    def root(self, session_id: str = "root", *, events: int = 1) -> Session:
        """A live ordinary session (a parent)."""
        session = self.store.new(SessionHeader(id=session_id, created_at=self.tick()))
        self.store.publish(session)
        for i in range(events):
            session.append(MessageEvent(role="user", content=f"hello {i}"))
        return session

    def child(
        self,
        session_id: str,
        parent: str,
        *,
        descriptors: Sequence[Any] = (None,),
        seed: Sequence[EventBody] = (),
        events: int = 2,
        live: bool = False,
        origin: str | None = "subagent",
        created_at: int | None = None,
        compact: bool = False,
        record: bool = True,
    ) -> SessionHeader:
        """A child session of ``parent``; each ``None`` descriptor is a default continuable one.

        Own events: the descriptors, then ``events`` messages (compacted if asked). With
        ``record`` every descriptor append is recorded in the shared index as the service
        would. Released (settled) unless ``live``.
        """
        header = SessionHeader(
            id=session_id,
            parent_session=parent,
            created_at=self.tick() if created_at is None else created_at,
            origin=origin,
            seed_length=len(seed),
        )
        session = self.store.new(header, seed=seed)
        self.store.publish(session)
        for raw in descriptors:
            value = continuable(session_id) if raw is None else raw
            event = session.append(SubagentDescriptorEvent(value))
            if record:
                self.index.record(header, value, event.seq)
        for i in range(events):
            session.append(MessageEvent(role="assistant", content=f"{session_id} says {i}"))
        if compact:
            session.append(Compaction(summary="so far", through_seq=len(session.events) - 1))
        if not live:
            self.store.release(session_id)
        return header

    def log_path(self, session_id: str) -> Path:
        return self.data_dir / f"{session_id}.jsonl"


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)
