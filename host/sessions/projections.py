"""The ``projections`` service: registered units that fold a session's events into small state.

A ``ProjectionUnit`` is a pure fold. Live sessions fold every registered unit on each append
(``Session.projection`` is a memory read); a cold session is restored by folding the events
``inspect`` returns, which gives the same state as the live fold of the same events. A unit whose
``initial`` or ``fold`` raises is contained: its state for that session becomes a
``ProjectionFailure`` value (and stays so), while other units and sessions are unaffected.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Generic, Protocol, TypeVar

import attrs

from host.cancel import CancelSignal
from host.errors import HostError
from host.sessions.model import Event, validate_session_id
from host.sessions.persistence import SessionPersistence

S = TypeVar("S")


class ProjectionError(HostError):
    """A projection misuse. Codes: ``DUPLICATE_PROJECTION`` (key already registered),
    ``UNKNOWN_PROJECTION`` (no unit under that key), ``NOT_FOUND`` (session neither live nor
    readable because no persistence was given)."""

    DUPLICATE_PROJECTION = "DUPLICATE_PROJECTION"
    UNKNOWN_PROJECTION = "UNKNOWN_PROJECTION"
    NOT_FOUND = "NOT_FOUND"


@attrs.frozen
class ProjectionUnit(Generic[S]):
    """A named fold. ``initial`` is the start state, or a zero-argument callable making it
    (callables are always called); ``fold(state, event)`` returns the next state and must not
    mutate its input. ``version`` changes when the fold's meaning changes (for derived caches)."""

    key: str
    initial: Callable[[], S] | S
    fold: Callable[[S, Event], S]
    version: int = 1

    def start(self) -> S:
        """A fresh initial state."""
        if callable(self.initial):
            made: S = self.initial()
            return made
        return self.initial


@attrs.frozen
class ProjectionFailure:
    """The result of a unit that raised for a session: which unit, and the error text."""

    unit: str
    error: str


def _failure(unit: ProjectionUnit[Any], exc: Exception) -> ProjectionFailure:
    return ProjectionFailure(unit=unit.key, error=f"{type(exc).__name__}: {exc}")


def fold_events(unit: ProjectionUnit[Any], events: Iterable[Event]) -> object:
    """Fold ``events`` from the unit's initial state; a raising unit gives ``ProjectionFailure``."""
    try:
        state = unit.start()
        fold = unit.fold
        for event in events:
            state = fold(state, event)
    except Exception as exc:
        return _failure(unit, exc)
    return state


def fold_one(unit: ProjectionUnit[Any], state: object, event: Event) -> object:
    """One fold step; a failure is sticky (a ``ProjectionFailure`` state stays as it is)."""
    if isinstance(state, ProjectionFailure):
        return state
    try:
        return unit.fold(state, event)
    except Exception as exc:
        return _failure(unit, exc)


class ProjectionSource(Protocol):
    """A live session as projections see it."""

    def projection(self, key: str) -> object:
        """The current folded state of unit ``key``."""
        ...


class LiveSessions(Protocol):
    """The part of the session store that snapshots need."""

    def get(self, session_id: str) -> ProjectionSource | None:
        """The live session with that id, if any."""
        ...


class Projections:
    """The registry of projection units (the ``projections`` service)."""

    def __init__(self) -> None:
        self._units: dict[str, ProjectionUnit[Any]] = {}
        self._ordered: tuple[ProjectionUnit[Any], ...] = ()

    def register(self, unit: ProjectionUnit[Any]) -> Callable[[], None]:
        """Add ``unit``; returns its idempotent disposer. A taken key → ``DUPLICATE_PROJECTION``."""
        if unit.key in self._units:
            raise ProjectionError(
                ProjectionError.DUPLICATE_PROJECTION,
                f"a projection unit {unit.key!r} is already registered",
            )
        self._units[unit.key] = unit
        self._ordered = tuple(self._units.values())

        def dispose() -> None:
            if self._units.get(unit.key) is unit:
                del self._units[unit.key]
                self._ordered = tuple(self._units.values())

        return dispose

    def get(self, key: str) -> ProjectionUnit[Any] | None:
        """The unit registered under ``key``, if any."""
        return self._units.get(key)

    def unit(self, key: str) -> ProjectionUnit[Any]:
        """The unit registered under ``key``; ``UNKNOWN_PROJECTION`` if none."""
        found = self._units.get(key)
        if found is None:
            raise ProjectionError(
                ProjectionError.UNKNOWN_PROJECTION, f"no projection unit {key!r} is registered"
            )
        return found

    def units(self) -> tuple[ProjectionUnit[Any], ...]:
        """Every registered unit, in registration order."""
        return self._ordered

    async def snapshot(
        self,
        session_id: str,
        key: str,
        *,
        store: LiveSessions | None = None,
        persistence: SessionPersistence | None = None,
        signal: CancelSignal | None = None,
    ) -> object:
        """The state of unit ``key`` for a session.

        A live session (found in ``store``) answers from its folded state with no persistence
        read; otherwise the session is ``persistence.inspect``ed once and folded (its errors,
        e.g. ``NOT_FOUND``/``CORRUPT``/``CANCELLED``, propagate as ``PersistenceError``).
        """
        validate_session_id(session_id)
        unit = self.unit(key)
        if store is not None:
            live = store.get(session_id)
            if live is not None:
                return live.projection(key)
        if persistence is None:
            raise ProjectionError(
                ProjectionError.NOT_FOUND,
                f"session {session_id!r} is not live and no persistence was given",
            )
        stored = await persistence.inspect(session_id, signal=signal)
        return fold_events(unit, stored.events)
