"""The live session store (the ``sessions`` service): sessions held in this process.

A session starts **unpublished** (``SessionStore.new``): invisible to ``get``/``list``, nothing
on disk, events kept in memory. ``publish`` makes it visible and, with persistence, stores the
header and every event so far atomically; afterwards every ``Session.append`` is written
through (acknowledged on return) before projections fold it.

Compaction appends a ``Compaction`` event; nothing is ever removed from the log.
``Session.model_messages`` is what a model sees: the latest compaction summary as a
**user-role** message (``source={"kind": "compaction", "through_seq": n}``, ``message_id``
``"compaction-<seq>"``) followed by the visible messages after it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from typing import overload

from host.cancel import CancelSignal
from host.errors import HostError
from host.sessions import model
from host.sessions.model import Compaction, Event, EventBody, MessageEvent, SessionHeader
from host.sessions.persistence import PersistenceError, SessionPersistence, SessionWriter
from host.sessions.projections import Projections, ProjectionUnit, fold_events, fold_one

log = logging.getLogger(__name__)

AppendObserver = Callable[["Session", Sequence[Event]], None]
"""Told of each append to a live session: the session and the events just appended."""


def _notify(observer: AppendObserver, session: Session, events: Sequence[Event]) -> None:
    try:
        observer(session, events)
    except Exception:
        log.exception("append observer of session %s failed", session.id)


class SessionError(HostError):
    """A session store error with a stable ``code``.

    Codes: ``DUPLICATE_SESSION`` (publishing an id that is live or already stored),
    ``ALREADY_LIVE`` (resuming a live session), ``NOT_LIVE`` (no live session with that id),
    ``ALREADY_PUBLISHED`` (publishing twice), ``RELEASED`` (using a released session),
    ``PERSISTENCE_UNAVAILABLE`` (resume without persistence). Storage failures surface as
    ``PersistenceError``.
    """

    DUPLICATE_SESSION = "DUPLICATE_SESSION"
    ALREADY_LIVE = "ALREADY_LIVE"
    NOT_LIVE = "NOT_LIVE"
    ALREADY_PUBLISHED = "ALREADY_PUBLISHED"
    RELEASED = "RELEASED"
    PERSISTENCE_UNAVAILABLE = "PERSISTENCE_UNAVAILABLE"


class EventsView(Sequence[Event]):
    """A read-only view of a session's events (no copy)."""

    __slots__ = ("_events",)

    def __init__(self, events: list[Event]) -> None:
        self._events = events

    @overload
    def __getitem__(self, index: int) -> Event: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Event]: ...

    def __getitem__(self, index: int | slice) -> Event | Sequence[Event]:
        if isinstance(index, slice):
            return tuple(self._events[index])
        return self._events[index]

    def __len__(self) -> int:
        return len(self._events)

    def __iter__(self) -> Iterator[Event]:
        return iter(self._events)


class Session:
    """One session: an immutable header and an append-only event log with live projections."""

    def __init__(
        self,
        header: SessionHeader,
        events: Sequence[Event],
        projections: Projections | None,
    ) -> None:
        self.header = header
        self._events: list[Event] = list(events)
        # The model view (see model_messages): the latest compaction and the visible messages
        # with seq >= _visible_from, maintained by _track_visible on every append.
        self._compaction: tuple[int, Compaction] | None = None
        self._visible: list[MessageEvent] = []
        self._visible_from = 0
        self._rebuild_visible()
        self._projections = projections
        self._states: dict[str, tuple[ProjectionUnit[object], object]] = {}
        self._writer: SessionWriter | None = None
        self._observers: Sequence[AppendObserver] = ()
        self.published = False
        self.released = False

    @property
    def id(self) -> str:
        """The session id (= the header's)."""
        return self.header.id

    @property
    def events(self) -> Sequence[Event]:
        """Every event, ``seq`` 0..n-1, as a read-only view."""
        return EventsView(self._events)

    def own_events(self) -> Sequence[Event]:
        """The events after the fork seed (``seq >= header.seed_length``)."""
        return tuple(self._events[self.header.seed_length :])

    def append(self, body: EventBody) -> Event:
        """Append ``body`` as the next event and return it.

        Synchronous. A published persistent session writes the event first (acknowledged on
        return; a ``PersistenceError`` appends nothing), then live projections fold it.
        """
        return self.append_all((body,))[0]

    def append_all(self, bodies: Sequence[EventBody]) -> list[Event]:
        """Append several events with one write: all of them are acknowledged, or none."""
        if self.released:
            raise SessionError(SessionError.RELEASED, f"session {self.id!r} was released")
        start = len(self._events)
        events = [Event(start + offset, body) for offset, body in enumerate(bodies)]
        if self._writer is not None and events:
            self._writer.append(events)
        for event in events:
            self._events.append(event)
            self._track_visible(event)
            self._fold(event)
        for observer in self._observers:
            _notify(observer, self, events)
        return events

    def commit(self, durable: bool = False) -> None:
        """Checkpoint; ``durable=True`` (turn end) syncs per the persistence's fsync policy."""
        if self._writer is not None:
            self._writer.commit(durable)

    def projection(self, key: str) -> object:
        """The current state of the registered unit ``key`` (a ``ProjectionFailure`` if it
        raised for this session); folded in memory, never read from storage."""
        if self._projections is None:
            raise SessionError(
                SessionError.NOT_LIVE, f"session {self.id!r} has no projections service"
            )
        unit = self._projections.unit(key)
        cached = self._states.get(key)
        if cached is not None and cached[0] is unit:
            return cached[1]
        state = fold_events(unit, self._events)
        self._states[key] = (unit, state)
        return state

    def _fold(self, event: Event) -> None:
        if self._projections is None:
            return
        states = self._states
        for unit in self._projections.units():
            cached = states.get(unit.key)
            if cached is not None and cached[0] is unit:
                states[unit.key] = (unit, fold_one(unit, cached[1], event))
            else:
                states[unit.key] = (unit, fold_events(unit, self._events))

    def model_messages(self) -> list[MessageEvent]:
        """What a model sees: the latest compaction summary (module docstring) followed by the
        messages after the compaction's ``through_seq``; model-hidden events never appear.

        A new list on every call, built from a view kept current on append (O(visible
        messages), not O(events)); the summary message is a new object each time, as before.
        """
        compaction = self._compaction
        if compaction is None:
            return self._visible.copy()
        return [_summary_message(*compaction), *self._visible]

    def _rebuild_visible(self) -> None:
        """Compute the model view from the whole log (at construction, and for a compaction
        that does not cover exactly the events before it)."""
        events = self._events
        start = 0
        self._compaction = None
        for event in reversed(events):
            body = event.body
            if isinstance(body, Compaction):
                self._compaction = (event.seq, body)
                start = max(body.through_seq + 1, 0)
                break
        # seq == index in the log, so the messages with seq >= start are events[start:]
        self._visible = [e.body for e in events[start:] if isinstance(e.body, MessageEvent)]
        self._visible_from = start

    def _track_visible(self, event: Event) -> None:
        """Keep the model view current after ``event`` was appended."""
        body = event.body
        if isinstance(body, MessageEvent):
            if event.seq >= self._visible_from:
                self._visible.append(body)
        elif isinstance(body, Compaction):
            start = max(body.through_seq + 1, 0)
            if start == event.seq:  # the usual case: it covers every event before it
                self._compaction = (event.seq, body)
                self._visible, self._visible_from = [], start
            else:
                self._rebuild_visible()

    def _attach(self, writer: SessionWriter | None, observers: Sequence[AppendObserver]) -> None:
        self._writer = writer
        self._observers = observers
        self.published = True

    def _release(self) -> None:
        self.released = True
        writer, self._writer = self._writer, None
        if writer is not None:
            try:
                writer.commit(True)
            finally:
                writer.close()

    def __repr__(self) -> str:
        return f"Session({self.id!r}, events={len(self._events)}, published={self.published})"


def _summary_message(seq: int, body: Compaction) -> MessageEvent:
    """The user-role message standing for a compaction summary in the model's view."""
    return MessageEvent(
        role="user",
        content=body.summary,
        message_id=f"compaction-{seq}",
        source={"kind": "compaction", "through_seq": body.through_seq},
    )


class SessionStore:
    """Live sessions of this process (the ``sessions`` service)."""

    def __init__(
        self, persistence: SessionPersistence | None, projections: Projections | None
    ) -> None:
        self.persistence = persistence
        self.projections = projections
        self._live: dict[str, Session] = {}
        self._resuming: set[str] = set()
        self._observers: list[AppendObserver] = []

    def observe(self, observer: AppendObserver) -> Callable[[], None]:
        """Call ``observer(session, events)`` after every append to a live session of this
        store (acknowledged events, in order; the session's own projections already folded
        them). An observer that raises is logged and kept; the append stands. Returns the
        disposer that stops the calls."""
        self._observers.append(observer)

        def stop() -> None:
            if observer in self._observers:
                self._observers.remove(observer)

        return stop

    def new(self, header: SessionHeader, *, seed: Sequence[EventBody] = ()) -> Session:
        """An unpublished session holding ``seed`` as events 0..n-1; nothing is stored."""
        events = [Event(seq, body) for seq, body in enumerate(seed)]
        return Session(header, events, self.projections)

    def publish(self, session: Session) -> None:
        """Make ``session`` live; with persistence, store header and events (all or nothing).

        ``DUPLICATE_SESSION`` if the id is live or stored; on any failure nothing is published.
        """
        if session.published or session.released:
            raise SessionError(
                SessionError.ALREADY_PUBLISHED, f"session {session.id!r} was already published"
            )
        self._check_free(session.id)
        writer: SessionWriter | None = None
        if self.persistence is not None:
            try:
                writer = self.persistence.open_writer(
                    session.header, create=True, events=tuple(session.events)
                )
            except PersistenceError as exc:
                if exc.code in (PersistenceError.ALREADY_EXISTS, PersistenceError.LOCKED):
                    raise SessionError(
                        SessionError.DUPLICATE_SESSION,
                        f"session {session.id!r} already exists in storage",
                    ) from exc
                raise
        session._attach(writer, self._observers)
        self._live[session.id] = session

    def _check_free(self, session_id: str) -> None:
        if session_id in self._live or session_id in self._resuming:
            raise SessionError(
                SessionError.DUPLICATE_SESSION, f"session {session_id!r} is already live"
            )

    def get(self, session_id: str) -> Session | None:
        """The live session with that id, or ``None`` (unpublished sessions are not live)."""
        return self._live.get(session_id)

    def list(self) -> list[SessionHeader]:
        """Headers of live sessions, sorted by ``created_at`` then id."""
        return sorted((s.header for s in self._live.values()), key=SessionHeader.sort_key)

    def live(self, session_id: str) -> Session:
        """The live session with that id; ``NOT_LIVE`` if there is none."""
        session = self._live.get(session_id)
        if session is None:
            raise SessionError(SessionError.NOT_LIVE, f"session {session_id!r} is not live")
        return session

    async def resume(self, session_id: str, *, signal: CancelSignal | None = None) -> Session:
        """Load a stored session (repairing it) with its writer and publish it: one
        ``persistence.resume``, so the session's lock is taken once and nobody writes between.

        ``ALREADY_LIVE`` if it is live (or being resumed); ``PERSISTENCE_UNAVAILABLE`` without
        persistence; ``PersistenceError`` (``NOT_FOUND``, ``LOCKED``, ``CORRUPT``, ``CANCELLED``).
        """
        model.validate_session_id(session_id)
        if session_id in self._live or session_id in self._resuming:
            raise SessionError(SessionError.ALREADY_LIVE, f"session {session_id!r} is live")
        if self.persistence is None:
            raise SessionError(
                SessionError.PERSISTENCE_UNAVAILABLE,
                f"cannot resume {session_id!r}: no session persistence",
            )
        self._resuming.add(session_id)
        try:
            resumed = await self.persistence.resume(session_id, signal=signal)
        finally:
            self._resuming.discard(session_id)
        stored = resumed.stored
        session = Session(stored.header, stored.events, self.projections)
        session._attach(resumed.writer, self._observers)
        self._live[session_id] = session
        return session

    def release(self, session_id: str) -> None:
        """Commit durably, close the writer and drop the session from the live set; idempotent."""
        session = self._live.pop(session_id, None)
        if session is not None:
            session._release()

    def compact(self, session_id: str, summary: str) -> Event:
        """Append a ``Compaction`` covering every event so far (``through_seq`` = last seq)."""
        session = self.live(session_id)
        return session.append(Compaction(summary=summary, through_seq=len(session.events) - 1))

    def fork(self, source_id: str, *, new_id: str | None = None, publish: bool = True) -> Session:
        """A new session seeded with a copy of the live ``source_id``'s events.

        Header: ``parent_session=source_id``, ``seed_length`` = events copied, ``origin=None``,
        the parent's ``delegation_depth``. Published unless ``publish=False``.
        """
        source = self.live(source_id)
        header = SessionHeader(
            id=new_id if new_id is not None else model.new_id(),
            parent_session=source.id,
            seed_length=len(source.events),
            delegation_depth=source.header.delegation_depth,
        )
        session = self.new(header, seed=[event.body for event in source.events])
        if publish:
            self.publish(session)
        return session
