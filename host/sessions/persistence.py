"""The persistence protocol: how session logs are written, listed, inspected and loaded.

The embedded implementation is ``host.sessions.jsonl.JsonlPersistence``; the PostgreSQL
plugin implements the same protocol. Every method validates the session id first (a hostile
id raises ``SessionIdError`` before anything touches storage) and reports failures as
``PersistenceError`` with one of the stable codes below.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Protocol, TypeVar, runtime_checkable

import attrs

from host.cancel import CancelSignal
from host.errors import HostError
from host.sessions import workers
from host.sessions.model import Event, SessionHeader, TurnEnd, TurnStart

T = TypeVar("T")


class PersistenceError(HostError):
    """A persistence failure with a stable ``code``.

    Codes: ``NOT_FOUND`` (no such session), ``CORRUPT`` (the stored log cannot be used as it is:
    no valid header, or damage before the end), ``LOCKED`` (another writer holds the session),
    ``ALREADY_EXISTS`` (creating a session that is already stored), ``PERSISTENCE_FAILED``
    (I/O failed, or the writer was misused), ``CANCELLED`` (the caller's signal was set).
    """

    NOT_FOUND = "NOT_FOUND"
    CORRUPT = "CORRUPT"
    LOCKED = "LOCKED"
    ALREADY_EXISTS = "ALREADY_EXISTS"
    PERSISTENCE_FAILED = "PERSISTENCE_FAILED"
    CANCELLED = "CANCELLED"

    # The texts every backend uses, so a user reads the same words whatever stores the log.

    @classmethod
    def failed(cls, action: str, exc: BaseException | str) -> PersistenceError:
        """``PERSISTENCE_FAILED``: ``<action>: <cause>``, the cause on one line."""
        cause = " ".join(str(exc).split())
        return cls(cls.PERSISTENCE_FAILED, f"{action}: {cause}")

    @classmethod
    def corrupt(cls, session_id: str, why: str) -> PersistenceError:
        """``CORRUPT``: the stored session cannot be used as it is."""
        return cls(cls.CORRUPT, f"session {session_id!r} is corrupt: {why}")

    @classmethod
    def not_found(cls, session_id: str) -> PersistenceError:
        """``NOT_FOUND``: no such stored session."""
        return cls(cls.NOT_FOUND, f"session {session_id!r} is not stored")

    @classmethod
    def already_stored(cls, session_id: str) -> PersistenceError:
        """``ALREADY_EXISTS``: creating a session that is already stored."""
        return cls(cls.ALREADY_EXISTS, f"session {session_id!r} is already stored")

    @classmethod
    def locked(cls, session_id: str) -> PersistenceError:
        """``LOCKED``: another writer, in any process, holds the session."""
        return cls(
            cls.LOCKED,
            f"session {session_id!r} is locked by another writer (another host or process)",
        )

    @classmethod
    def fenced(cls, session_id: str) -> PersistenceError:
        """``LOCKED``: a message on behalf of a session another writer took over (``Voice``)."""
        return cls(
            cls.LOCKED,
            f'session "{session_id}" was taken over by another host since this host held it; '
            "nothing was sent on its behalf",
        )


def encode_append(
    session_id: str,
    next_seq: int,
    events: Sequence[Event],
    encode: Callable[[Sequence[Event]], T],
) -> T:
    """What every writer does before writing anything: check that ``events`` are numbered
    ``next_seq``, ``+1``, … and encode them all (``PERSISTENCE_FAILED`` if either fails)."""
    for offset, event in enumerate(events):
        if event.seq != next_seq + offset:
            raise PersistenceError(
                PersistenceError.PERSISTENCE_FAILED,
                f"session {session_id!r}: event seq {event.seq} out of order "
                f"(expected {next_seq + offset})",
            )
    try:
        return encode(events)
    except Exception as exc:
        raise PersistenceError.failed(
            f"cannot encode events of session {session_id!r}", exc
        ) from exc


@attrs.frozen
class StoredSession:
    """What a stored log holds: the header and the longest valid prefix of events.

    ``damage`` says, in the words of ``CORRUPT``, where the log is damaged before its end (not
    a torn tail: ``resume`` refuses such a log rather than drop events), else None.
    ``closed_turn`` is the id of the turn the runtime closed with ``stop_reason="interrupted"``
    after a ``resume`` (``host.sessions.loading``).

    How much of its storage a backend ignored or cut off is the backend's own: one whose
    writes can tear counts it in a subclass (``host.sessions.jsonl.JsonlStored``); here, for a
    backend whose writes cannot tear, ``ignored_bytes`` and ``repaired_bytes`` are 0.

    Its ``repr`` shows the number of events, not each event: ``asyncio.run`` (CPython 3.11)
    ``repr``s the main task's result when it restores the SIGINT handler, so a full ``repr``
    of a 100k-event log made ``asyncio.run(persistence.inspect(...))`` twice as slow.
    """

    header: SessionHeader
    events: tuple[Event, ...] = attrs.field(repr=lambda events: f"<{len(events)} events>")
    damage: str | None = None
    closed_turn: str | None = None

    @property
    def damaged_middle(self) -> bool:
        """True when the log is damaged before its end (``damage``)."""
        return self.damage is not None

    @property
    def ignored_bytes(self) -> int:
        """Stored bytes after the valid events that the read ignored (class docstring)."""
        return 0

    @property
    def repaired_bytes(self) -> int:
        """Stored bytes ``resume`` cut off (class docstring)."""
        return 0

    @property
    def open_turn(self) -> str | None:
        """The id of a turn that started and did not end, if the log ends inside one."""
        return open_turn(self.events)


def open_turn(events: Sequence[Event]) -> str | None:
    """The turn id of the last ``TurnStart`` if no ``TurnEnd`` for it follows, else ``None``."""
    for event in reversed(events):
        body = event.body
        if isinstance(body, TurnEnd):
            return None
        if isinstance(body, TurnStart):
            return body.turn_id
    return None


class SessionWriter(Protocol):
    """The single writer of one session; holds the session's exclusive lock until closed."""

    @property
    def session_id(self) -> str:
        """The session this writer appends to."""
        ...

    def append(self, events: Sequence[Event]) -> None:
        """Write ``events`` (consecutive ``seq``s continuing the log) and return.

        Synchronous. On return the lines are in storage and survive a killed process (not
        necessarily a machine crash: see ``commit``). All events are encoded before anything is
        written, so a detectable failure writes nothing; it raises ``PersistenceError``.
        """
        ...

    def commit(self, durable: bool = False) -> None:
        """Mark a checkpoint; ``durable=True`` (turn end) syncs to disk per the fsync policy."""
        ...

    def close(self) -> None:
        """Release the lock and the file; idempotent. Appending afterwards is an error."""
        ...


class SyncingWriter(SessionWriter, Protocol):
    """A writer whose durable commit can wait for storage without blocking the event loop
    (the JSONL writer: its sync runs on a worker thread; a writer without it commits with
    ``commit``, on the caller's thread)."""

    async def commit_async(self, durable: bool = False) -> None:
        """``commit`` that lets the event loop run while storage syncs; same errors. A
        cancelled caller gets its ``CancelledError`` once the sync finished (the writer
        recorded its outcome: synced, or broken as ``commit`` leaves it)."""
        ...


@runtime_checkable
class QueuedWriter(SessionWriter, Protocol):
    """A writer whose appends a background committer writes, in submission order.

    ``submit`` checks nothing on the caller's thread: it queues ``events`` and returns a future
    that resolves once they are committed (acknowledged) or fails with ``PersistenceError``
    (nothing of them written). Appends queued behind a failed one of the same session fail
    too, their ``seq``s no longer continuing the log. ``append`` returns after the commit, in
    order behind whatever was submitted before it (it may write on the calling thread when
    nothing is queued).
    Submitting is what lets a host's agents wait for their appends without blocking the
    event loop, and lets the committer write appends that arrive together in one commit.
    """

    def submit(self, events: Sequence[Event]) -> Future[None]:
        """Queue ``events`` (consecutive ``seq``s continuing the log after every earlier
        submission) and return the future of their acknowledgement."""
        ...


def _unfenced() -> None:
    return None


@attrs.frozen
class Voice:
    """The right to send messages on behalf of a session, given by its writer (``voice``).

    It ends only when another writer took the session over while that writer held it; its
    writer's orderly close ends nothing (a settled child's notice is sent after its release,
    and whoever takes the session after that takes it in order). Every message a host sends
    on behalf of a session checks it (``holds``); a backend that queues messages itself checks
    ``fence()`` in the statement that queues them.

    ``known`` answers without waiting: True or False, or None when only storage can tell;
    then ``holds`` runs ``read`` (a database round trip) on a worker thread. ``fence`` is the
    lease epoch the queueing statement must still find (PostgreSQL), or None when there is
    nothing left to check (the voice holds for good, or the backend has no leases).
    """

    session_id: str
    known: Callable[[], bool | None] = attrs.field(repr=False)
    read: Callable[[], bool] | None = attrs.field(default=None, repr=False)
    fence: Callable[[], int | None] = attrs.field(default=_unfenced, repr=False)

    async def holds(self) -> bool:
        """True while no other writer took the session over (may read storage);
        ``PersistenceError`` when storage cannot tell."""
        known = self.known()
        if known is not None or self.read is None:
            return bool(known)
        return await workers.run(self.read)


class VoicedWriter(SessionWriter, Protocol):
    """A writer that gives a ``Voice`` (the JSONL and PostgreSQL writers do)."""

    def voice(self) -> Voice:
        """The right to send messages on behalf of this writer's session (``Voice``)."""
        ...


@attrs.frozen
class Resumed:
    """What ``SessionPersistence.resume`` hands over: the stored session and the writer that
    holds its lock, taken once before the log was read."""

    stored: StoredSession
    writer: SessionWriter


class SessionPersistence(Protocol):
    """Where session logs live. One writer per session across processes.

    A persistence may also offer ``create_async`` (``CreatingPersistence``), which the store
    uses to publish from the event loop.
    """

    def open_writer(
        self, header: SessionHeader, *, create: bool, events: Sequence[Event] = ()
    ) -> SessionWriter:
        """Take the session's exclusive lock and return its writer.

        ``create=True`` stores a new log holding ``header`` and ``events`` atomically (all or
        nothing; ``ALREADY_EXISTS`` if it is stored already). ``create=False`` opens an existing
        log for appending (call after a ``resume`` repaired it; ``NOT_FOUND``, ``CORRUPT`` if
        its header differs from ``header`` or its tail is torn). Another holder → ``LOCKED``.
        """
        ...

    async def list(self, *, signal: CancelSignal | None = None) -> list[SessionHeader]:
        """Every stored session's header, sorted by ``(created_at, id)``; reads headers only.

        Entries whose header is unreadable are not sessions and are skipped.
        """
        ...

    async def inspect(
        self, session_id: str, *, signal: CancelSignal | None = None
    ) -> StoredSession:
        """Read-only: the header and the valid prefix of events; never modifies storage.

        ``NOT_FOUND`` if absent, ``CORRUPT`` if the header is missing or wrong.
        """
        ...

    async def resume(self, session_id: str, *, signal: CancelSignal | None = None) -> Resumed:
        """Take the session's lock, read the log under it and hand both over: the stored
        session and the writer that keeps the lock (continuing after the returned events), so
        no other writer can come between the read and the first append.

        Like ``inspect``, repairing storage under the lock (JSONL cuts a torn tail off);
        nothing else changes: closing a turn left open is the runtime's
        (``host.sessions.loading``). ``LOCKED`` if a writer holds the session; ``CORRUPT`` for
        damage before the end; otherwise as ``inspect``. A failure or a cancelled caller
        leaves the lock released.
        """
        ...


class CreatingPersistence(SessionPersistence, Protocol):
    """A persistence that stores a new log without blocking the event loop on storage (the
    JSONL one syncs the new file on the sync thread; PostgreSQL inserts it on a worker
    thread)."""

    async def create_async(
        self, header: SessionHeader, events: Sequence[Event] = ()
    ) -> SessionWriter:
        """``open_writer(header, create=True, events=events)``, same errors, while the event
        loop runs. A cancelled caller gets its ``CancelledError`` once storage answered; the
        lock is then not held (a log stored by then stays stored)."""
        ...
