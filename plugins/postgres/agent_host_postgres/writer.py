"""The single writer of one PostgreSQL session, fenced by its lease epoch.

A writer does not talk to the database itself: ``submit`` queues its appends on its lane of
the host's ``Committer`` (a thread, group commit), which asks the writer to ``plan`` each append in
submission order and tells it the outcome. An append renews the lease and inserts its events
in one statement and is acknowledged after the commit; a failure writes nothing. When the lease
was taken over the statement matches nothing: the append fails with ``LOCKED`` and the writer
refuses every later append. ``close`` releases the lease.

**Unknown outcomes**: when the connection is lost after an append was sent, it may or may not
have committed. The append fails (it was never acknowledged), and the next append first
deletes whatever the session holds from that ``seq`` on, under the same lease, in the same
transaction: the stored log is again exactly what was acknowledged, and the writer goes on.
An append that accepted a queued remote message cannot be undone that way (the message left
the remote inbox with it), so after such an unknown outcome the writer refuses to write.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import psycopg

from agent_host_postgres import leases
from agent_host_postgres.leases import LeaseHolder
from host.api import Event, PersistenceError, Voice, encode_append, encode_event

if TYPE_CHECKING:
    from agent_host_postgres.committer import Lane

__all__ = ["LeaseHolder", "PostgresWriter", "encode_bodies", "lease_lost"]


def encode_bodies(events: Sequence[Event]) -> list[str]:
    """Each event's codec line without its newline, all encoded before anything is written.

    (Encoded one by one: splitting a joined text on line breaks would also split at U+2028.)
    """
    return [encode_event(event).decode("utf-8")[:-1] for event in events]


def lease_lost(session_id: str) -> PersistenceError:
    """``LOCKED``: this host's lease on the session was taken over."""
    return PersistenceError(
        PersistenceError.LOCKED,
        f"session {session_id!r}: this host's lease was taken over by another host; "
        "it can no longer write to it",
    )


class PostgresWriter:
    """The writer of one session (a ``QueuedWriter``); see ``SessionWriter`` for what each
    method promises. Its append state is kept by the committer's thread."""

    def __init__(
        self,
        holder: LeaseHolder,
        lane: Lane,
        session_id: str,
        epoch: int,
        next_seq: int,
    ) -> None:
        self._holder = holder
        self._lane = lane
        self._session_id = session_id
        self._epoch = epoch
        self._next_seq = next_seq
        self._closed = False
        self._broken: PersistenceError | None = None
        self._unsure = False  # the last append's outcome is unknown: clear from _next_seq
        self._queued = 0  # submitted appends not yet resolved
        self._failure: PersistenceError | None = None  # the last failed append's error
        self._released = False  # its close gave the lease up in order: the voice holds for good

    @property
    def session_id(self) -> str:
        """The session this writer appends to."""
        return self._session_id

    @property
    def epoch(self) -> int:
        """The lease epoch this writer writes under."""
        return self._epoch

    @property
    def next_seq(self) -> int:
        """The ``seq`` the next committed event must carry."""
        return self._next_seq

    def submit(self, events: Sequence[Event]) -> Future[None]:
        """Queue ``events`` on the writer's lane; the future resolves after their commit."""
        future = self._lane.submit(self, tuple(events))
        self._queued += 1
        future.add_done_callback(self._dequeued)
        return future

    def _dequeued(self, _: Future[None]) -> None:
        self._queued -= 1

    def append(self, events: Sequence[Event]) -> None:
        """Write ``events`` and return after their commit, blocking the calling thread: on
        it when nothing of this writer is queued (no thread hand-off), else behind that."""
        if not events:
            self._check_usable()
        elif self._queued:
            self.submit(events).result()
        else:
            self._lane.write_now(self, tuple(events))

    # -- the committer's side --------------------------------------------------------------

    def plan(self, events: Sequence[Event], next_seq: int) -> dict[str, Any]:
        """The parameters of the fenced insert of ``events`` (which must start at
        ``next_seq``: the writer's, or after the appends planned before in the same commit);
        ``PersistenceError`` if the writer is unusable or the events cannot be written."""
        self._check_usable()
        if self._failure is not None and events and events[0].seq != next_seq:
            raise PersistenceError(  # numbered after an append that failed
                PersistenceError.PERSISTENCE_FAILED,
                f"cannot append to session {self._session_id!r}: an earlier append failed "
                f"({self._failure.message})",
            )
        bodies = encode_append(self._session_id, next_seq, events, encode_bodies)
        return {
            "sid": self._session_id,
            "owner": self._holder.owner,
            "epoch": self._epoch,
            "ttl": self._holder.ttl,
            "seqs": [e.seq for e in events],
            "bodies": bodies,
            "status": leases.status_after(events),
            "queued": leases.queued_ids(events),
            "clear_from": self._next_seq if self._unsure else None,
        }

    def written(self, count: int) -> None:
        """``count`` events were committed."""
        self._next_seq += count
        self._unsure = False
        self._failure = None

    def failed(self, error: PersistenceError) -> None:
        """An append failed with ``error``: the ones numbered after it say so when they fail."""
        self._failure = error

    def lost_lease(self) -> PersistenceError:
        """The lease was taken over: refuse every later append; the error to report."""
        self._broken = lease_lost(self._session_id)
        return self._broken

    def outcome_unknown(self, plan: dict[str, Any], exc: Exception) -> None:
        """The connection was lost after ``plan`` was sent (see the module docstring)."""
        if plan["queued"]:
            self._broken = PersistenceError.failed(
                f"writer of session {self._session_id!r} is unusable: the database "
                "connection was lost while it accepted a queued message",
                exc,
            )
        else:
            self._unsure = True

    def commit(self, durable: bool = False) -> None:
        """Every append is already committed; only checks that the writer is usable."""
        self._check_usable()

    def _check_usable(self) -> None:
        if self._closed:
            raise PersistenceError(
                PersistenceError.PERSISTENCE_FAILED,
                f"writer of session {self._session_id!r} is closed",
            )
        if self._broken is not None:
            raise PersistenceError(self._broken.code, self._broken.message)

    def voice(self) -> Voice:
        """The right to send messages on behalf of the session (``Voice``): it ends only when
        another host took the lease over while this writer held it. After a release in order
        it holds for good and costs nothing; while the lease was renewed less than its TTL ago
        it holds without a read; else it reads the lease row (``leases.SPEAKS``), and
        ``send_remote`` checks the same in the statement that queues."""
        return Voice(self._session_id, self._known, self._read, self._fence)

    def _known(self) -> bool | None:
        if self._broken is not None and self._broken.code == PersistenceError.LOCKED:
            return False
        if self._released:
            return True
        if not self._closed and self._holder.fresh(self._session_id, self._epoch):
            return True
        return None

    def _read(self) -> bool:
        try:
            return self._holder.speaks(self._session_id, self._epoch)
        except psycopg.Error as exc:
            raise PersistenceError.failed(
                f"cannot read the lease of session {self._session_id!r}", exc
            ) from exc

    def _fence(self) -> int | None:
        return None if self._released else self._epoch

    def _gave_up(self) -> None:
        self._released = True

    def close(self) -> None:
        """Release the lease (unless it was lost); idempotent. Never raises.

        Appends still queued fail (the session waits for its appends before it closes)."""
        if self._closed:
            return
        self._closed = True
        self._holder.release(self._session_id, self._epoch, self._gave_up)

    def __enter__(self) -> PostgresWriter:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
