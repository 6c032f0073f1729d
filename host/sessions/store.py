"""The live session store (the ``sessions`` service): sessions held in this process.

A session starts **unpublished** (``SessionStore.new``): invisible to ``get``/``list``, nothing
on disk, events kept in memory. ``publish`` makes it visible and, with persistence, stores the
header and every event so far atomically; afterwards every append is written through
(``host.sessions.session``).

Compaction appends a ``Compaction`` event; nothing is ever removed from the log.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import cast

from host.cancel import CancelSignal
from host.sessions import loading, model
from host.sessions.model import Compaction, Event, EventBody, SessionHeader
from host.sessions.persistence import (
    CreatingPersistence,
    PersistenceError,
    SessionPersistence,
    SessionWriter,
)
from host.sessions.projections import Projections
from host.sessions.session import AppendObserver, Session, SessionError

__all__ = ["Session", "SessionError", "SessionStore"]


class SessionStore:
    """Live sessions of this process (the ``sessions`` service)."""

    def __init__(
        self, persistence: SessionPersistence | None, projections: Projections | None
    ) -> None:
        self.persistence = persistence
        self.projections = projections
        self._live: dict[str, Session] = {}
        self._arriving: set[str] = set()  # ids being resumed or stored: not live, not free
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
        self._check_publishable(session)
        writer: SessionWriter | None = None
        if self.persistence is not None:
            with _as_duplicate(session.id):
                writer = self.persistence.open_writer(
                    session.header, create=True, events=tuple(session.events)
                )
        self._go_live(session, writer)

    async def publish_async(self, session: Session) -> None:
        """``publish`` for code on the event loop: a persistence that can
        (``CreatingPersistence``) stores the new log while other agents run, the id held
        meanwhile (a second publish or a resume of it is refused as while it is live). A
        cancelled caller gets its ``CancelledError`` once storage answered; nothing is
        published then."""
        persistence = self.persistence
        if persistence is None or not hasattr(persistence, "create_async"):
            self.publish(session)
            return
        self._check_publishable(session)
        creating = cast(CreatingPersistence, persistence)
        self._arriving.add(session.id)
        try:
            with _as_duplicate(session.id):
                writer = await creating.create_async(session.header, tuple(session.events))
        finally:
            self._arriving.discard(session.id)
        self._go_live(session, writer)

    def _check_publishable(self, session: Session) -> None:
        if session.published or session.released:
            raise SessionError(
                SessionError.ALREADY_PUBLISHED, f"session {session.id!r} was already published"
            )
        self._check_free(session.id)

    def _go_live(self, session: Session, writer: SessionWriter | None) -> None:
        session._attach(writer, self._observers)
        self._live[session.id] = session

    def _check_free(self, session_id: str) -> None:
        if session_id in self._live or session_id in self._arriving:
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
        """Load a stored session (repairing it: ``host.sessions.loading``) with its writer and
        publish it: one ``persistence.resume``, so the session's lock is taken once and nobody
        writes between.

        ``ALREADY_LIVE`` if it is live (or being resumed); ``PERSISTENCE_UNAVAILABLE`` without
        persistence; ``PersistenceError`` (``NOT_FOUND``, ``LOCKED``, ``CORRUPT``, ``CANCELLED``).
        """
        model.validate_session_id(session_id)
        if session_id in self._live or session_id in self._arriving:
            raise SessionError(SessionError.ALREADY_LIVE, f"session {session_id!r} is live")
        if self.persistence is None:
            raise SessionError(
                SessionError.PERSISTENCE_UNAVAILABLE,
                f"cannot resume {session_id!r}: no session persistence",
            )
        self._arriving.add(session_id)
        try:
            resumed = await loading.resume(self.persistence, session_id, signal=signal)
        finally:
            self._arriving.discard(session_id)
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


@contextmanager
def _as_duplicate(session_id: str) -> Iterator[None]:
    """Storage's ``ALREADY_EXISTS``/``LOCKED`` on creation as ``DUPLICATE_SESSION``."""
    try:
        yield
    except PersistenceError as exc:
        if exc.code in (PersistenceError.ALREADY_EXISTS, PersistenceError.LOCKED):
            raise SessionError(
                SessionError.DUPLICATE_SESSION,
                f"session {session_id!r} already exists in storage",
            ) from exc
        raise
