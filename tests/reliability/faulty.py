"""``Faulty``: the real JSONL persistence, failing chosen calls (no tests here).

Installed in a real host as the ``session_persistence`` service by ``faulty_plugin`` (with the
built-in one disabled), so the store, listing, the continuation manager and the tools all run
unchanged over it. Faults: ``list`` (every call), ``inspect``/``load``/``open_writer`` (by
session id; ``fail_load`` and ``fail_open`` also fail ``resume``) and ``append`` (by session
id, through a wrapper of the real writer, which ``resume`` hands out too; the wrapper raises
before the real writer is called, so the real writer's own no-partial-line guarantee is
tested separately with a real ``EFBIG``). ``after_append(session_id, events)``, when set, is
called after every successful append (to arm a fault at a precise moment).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from host import hookimpl
from host.cancel import CancelSignal
from host.sessions.jsonl import JsonlPersistence
from host.sessions.model import Event, SessionHeader
from host.sessions.persistence import PersistenceError, Resumed, StoredSession

BOOM = "injected fault"


def fault() -> PersistenceError:
    return PersistenceError(PersistenceError.PERSISTENCE_FAILED, BOOM)


class FaultyWriter:
    def __init__(self, owner: Faulty, inner: Any) -> None:
        self.owner = owner
        self.inner = inner

    @property
    def session_id(self) -> str:
        return str(self.inner.session_id)

    def append(self, events: Sequence[Event]) -> None:
        if self.session_id in self.owner.fail_append:
            self.owner.hits.append(("append", self.session_id))
            raise fault()
        self.inner.append(events)
        if self.owner.after_append is not None:
            self.owner.after_append(self.session_id, events)

    def commit(self, durable: bool = False) -> None:
        self.inner.commit(durable)

    def close(self) -> None:
        self.inner.close()


class Faulty:
    """The real persistence with injected failures (module docstring)."""

    def __init__(self, inner: JsonlPersistence) -> None:
        self.inner = inner
        self.fail_list = False
        self.fail_inspect: set[str] = set()
        self.fail_load: set[str] = set()
        self.fail_open: set[str] = set()
        self.fail_append: set[str] = set()
        self.hits: list[tuple[str, str]] = []
        self.after_append: Callable[[str, Sequence[Event]], None] | None = None

    def clear(self) -> None:
        self.fail_list = False
        for chosen in (self.fail_inspect, self.fail_load, self.fail_open, self.fail_append):
            chosen.clear()

    def path_for(self, session_id: str) -> Path:
        return self.inner.path_for(session_id)

    def open_writer(
        self, header: SessionHeader, *, create: bool, events: Sequence[Event] = ()
    ) -> FaultyWriter:
        if header.id in self.fail_open:
            self.hits.append(("open_writer", header.id))
            raise fault()
        return FaultyWriter(self, self.inner.open_writer(header, create=create, events=events))

    async def list(self, *, signal: CancelSignal | None = None) -> list[SessionHeader]:
        if self.fail_list:
            self.hits.append(("list", ""))
            raise fault()
        return await self.inner.list(signal=signal)

    async def inspect(
        self, session_id: str, *, signal: CancelSignal | None = None
    ) -> StoredSession:
        if session_id in self.fail_inspect:
            self.hits.append(("inspect", session_id))
            raise fault()
        return await self.inner.inspect(session_id, signal=signal)

    async def resume(self, session_id: str, *, signal: CancelSignal | None = None) -> Resumed:
        if session_id in self.fail_load | self.fail_open:
            self.hits.append(("resume", session_id))
            raise fault()
        resumed = await self.inner.resume(session_id, signal=signal)
        return Resumed(resumed.stored, FaultyWriter(self, resumed.writer))


class FaultyPlugin:
    """Provides ``session_persistence`` as a ``Faulty`` over ``<data_dir>``."""

    name = "faulty_persistence"
    requires: tuple[str, ...] = ()

    def __init__(self) -> None:
        self.persistence: Faulty | None = None

    @hookimpl
    def register_services(self, register: Callable[[str, Any], None], ctx: Any) -> None:
        self.persistence = Faulty(JsonlPersistence(ctx.settings.data_dir, fsync="never"))
        register("session_persistence", self.persistence)


DISABLE_BUILTIN = {"AGENT_HOST_DISABLE_PLUGINS": "session_persistence"}
