"""One live session: an immutable header, an append-only event log, live projections.

Appends are written through the session's writer before anything else sees them
(acknowledged on return, or on the awaited return of ``append_async``, whose writer may
commit in the background: ``QueuedWriter``); then the model view, the projections and the
store's observers take them, in ``seq`` order whichever way they were appended.

``Session.model_messages`` is what a model sees: the latest compaction summary as a
**user-role** message (``source={"kind": "compaction", "through_seq": n}``, ``message_id``
``"compaction-<seq>"``) followed by the visible messages after it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Final, cast, overload

from host.errors import HostError
from host.sessions.model import Compaction, Event, EventBody, MessageEvent, SessionHeader
from host.sessions.persistence import (
    QueuedWriter,
    SessionWriter,
    SyncingWriter,
    Voice,
    VoicedWriter,
)
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
        self.id: Final[str] = header.id
        """The session id (= the header's, which never changes)."""
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
        self._queued: QueuedWriter | None = None  # the writer, if it is one (checked once)
        self._syncing: SyncingWriter | None = None  # likewise
        # Submissions to a QueuedWriter not settled yet, oldest first; _next_seq follows them.
        # After a failed one, the _doomed entries behind it fail too (see _settle).
        self._inflight: deque[tuple[list[Event], concurrent.futures.Future[None]]] = deque()
        self._next_seq = len(self._events)
        self._doomed = 0
        self._observers: Sequence[AppendObserver] = ()
        self.published = False
        self.released = False
        self._voice: Voice | None = None  # its writer's, kept after the release

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
        return; a ``PersistenceError`` appends nothing), then live projections fold it. With a
        ``QueuedWriter`` this blocks the calling thread until the commit: on the event loop,
        prefer ``append_async``.
        """
        return self.append_all((body,))[0]

    def append_all(self, bodies: Sequence[EventBody]) -> list[Event]:
        """Append several events with one write: all of them are acknowledged, or none."""
        events = self._numbered(bodies)
        queued, writer = self._queued, self._writer
        if queued is not None and self._inflight and events:  # in order, behind those
            future = self._submit(queued, events)
            concurrent.futures.wait([future])
            self._settle()
            future.result()  # its PersistenceError, if it failed
            return events
        if writer is not None and events:
            writer.append(events)
        self._next_seq += len(events)
        self._apply(events)
        return events

    async def append_async(self, body: EventBody) -> Event:
        """``append`` for code on the event loop (see ``append_all_async``)."""
        return (await self.append_all_async((body,)))[0]

    async def append_all_async(self, bodies: Sequence[EventBody]) -> list[Event]:
        """``append_all`` that waits for a ``QueuedWriter``'s commit without blocking the loop,
        so other agents run (and their appends share the commit) meanwhile. Other writers
        write at once, as ``append_all`` does.

        Cancelling the caller does not withdraw the write: ``CancelledError`` is raised once
        the write's outcome is known, the events added if it was committed.
        """
        queued = self._queued
        if queued is None or not bodies:
            return self.append_all(bodies)
        events = self._numbered(bodies)
        future = self._submit(queued, events)
        loop = asyncio.get_running_loop()
        settled = loop.create_future()

        def on_loop() -> None:  # settled on the loop, whether anyone still waits or not
            self._settle()
            if not settled.done():
                settled.set_result(None)

        def done(_: object) -> None:
            if not loop.is_closed():
                loop.call_soon_threadsafe(on_loop)

        future.add_done_callback(done)
        try:
            await settled
        except asyncio.CancelledError:
            outcome = asyncio.wrap_future(future)
            await asyncio.wait([outcome])  # the write's outcome, then the cancel
            outcome.exception()  # seen here: the session settles it
            self._settle()
            raise
        future.result()
        return events

    def _numbered(self, bodies: Sequence[EventBody]) -> list[Event]:
        """``bodies`` as the events that come next (after every submission in flight)."""
        if self.released:
            raise SessionError(SessionError.RELEASED, f"session {self.id!r} was released")
        start = self._next_seq
        return [Event(start + offset, body) for offset, body in enumerate(bodies)]

    def _submit(self, writer: QueuedWriter, events: list[Event]) -> concurrent.futures.Future[None]:
        future = writer.submit(events)
        self._next_seq += len(events)
        self._inflight.append((events, future))
        return future

    def _settle(self) -> None:
        """Add the events of finished submissions, oldest first, stopping at an unfinished one.

        A failed submission adds nothing, and the ones queued behind it were numbered after
        it, so the writer fails them too (they are skipped as they finish); numbering restarts
        after the events that were written.
        """
        inflight = self._inflight
        while inflight and inflight[0][1].done():
            events, future = inflight.popleft()
            if self._doomed:
                self._doomed -= 1
            elif future.cancelled() or future.exception() is not None:
                self._doomed = len(inflight)
                self._next_seq = len(self._events)
            else:
                self._apply(events)

    def _apply(self, events: Sequence[Event]) -> None:
        """Add acknowledged ``events``: the log, the model view, projections, observers."""
        for event in events:
            self._events.append(event)
            self._track_visible(event)
            self._fold(event)
        for observer in self._observers:
            _notify(observer, self, events)

    def commit(self, durable: bool = False) -> None:
        """Checkpoint; ``durable=True`` (turn end) syncs per the persistence's fsync policy."""
        if self._writer is not None:
            self._writer.commit(durable)

    async def commit_async(self, durable: bool = False) -> None:
        """``commit`` for code on the event loop: a writer that can (``SyncingWriter``) syncs
        while other agents run; another commits at once. A cancelled caller gets its
        ``CancelledError`` once the sync finished."""
        syncing = self._syncing
        if syncing is not None:
            await syncing.commit_async(durable)
        elif self._writer is not None:
            self._writer.commit(durable)

    def voice(self) -> Voice | None:
        """The right to send messages on behalf of this session, from its writer (``Voice``),
        also once released (the release ends no voice): None when the session is stored
        nowhere (or by a backend whose writers give none)."""
        return self._voice

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
        # A writer is a SessionWriter; whether it also gives a voice or queues is one attribute
        # each (not a Protocol isinstance, which walks every member at each session's start).
        self._voice = cast(VoicedWriter, writer).voice() if hasattr(writer, "voice") else None
        self._queued = cast(QueuedWriter, writer) if hasattr(writer, "submit") else None
        self._syncing = cast(SyncingWriter, writer) if hasattr(writer, "commit_async") else None
        self._observers = observers
        self.published = True

    def _release(self) -> None:
        self.released = True
        if self._inflight:  # what was submitted is written (or fails) before the lock goes
            concurrent.futures.wait([future for _, future in self._inflight])
            self._settle()
        writer, self._writer, self._queued, self._syncing = self._writer, None, None, None
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
