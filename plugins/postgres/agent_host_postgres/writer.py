"""The single writer of one PostgreSQL session, fenced by its lease epoch.

``append`` renews the lease and inserts its events in one statement and returns after the
commit (acknowledged); a failure writes nothing. When the lease was taken over, the statement
matches nothing: the append fails with ``LOCKED`` and the writer refuses every later append.
``close`` releases the lease.
"""

from __future__ import annotations

from collections.abc import Sequence

import psycopg

from agent_host_postgres import leases
from agent_host_postgres.leases import LeaseHolder
from host.sessions.codec import encode_event
from host.sessions.model import Event
from host.sessions.persistence import PersistenceError, encode_append

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
    """The writer of one session; see ``SessionWriter`` for what each method promises."""

    def __init__(self, holder: LeaseHolder, session_id: str, epoch: int, next_seq: int) -> None:
        self._holder = holder
        self._session_id = session_id
        self._epoch = epoch
        self._next_seq = next_seq
        self._closed = False
        self._broken: PersistenceError | None = None

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
        """The ``seq`` the next appended event must carry."""
        return self._next_seq

    def append(self, events: Sequence[Event]) -> None:
        """Encode all ``events``, check their ``seq``s, insert them under the lease."""
        self._check_usable()
        if not events:
            return
        bodies = encode_append(self._session_id, self._next_seq, events, encode_bodies)
        written = self._insert(events, bodies)
        if not written:
            self._broken = lease_lost(self._session_id)
            self._check_usable()
        self._next_seq += len(events)

    def _insert(self, events: Sequence[Event], bodies: list[str]) -> bool:
        holder = self._holder
        sent = False
        try:
            with holder.connect() as conn:
                sent = True
                return leases.fenced_insert(
                    conn,
                    session_id=self._session_id,
                    owner=holder.owner,
                    epoch=self._epoch,
                    ttl=holder.ttl,
                    seqs=[e.seq for e in events],
                    bodies=bodies,
                    status=leases.status_after(events),
                    queued=leases.queued_ids(events),
                )
        except leases.AlreadyDelivered as exc:
            raise PersistenceError.failed(
                f"cannot append to session {self._session_id!r}",
                RuntimeError("a queued message in the batch was already delivered"),
            ) from exc
        except psycopg.Error as exc:
            if sent and isinstance(exc, psycopg.OperationalError):
                # The statement may or may not have committed: never guess, stop writing.
                self._broken = PersistenceError.failed(
                    f"writer of session {self._session_id!r} is unusable: the database "
                    "connection was lost during an append",
                    exc,
                )
            raise PersistenceError.failed(
                f"cannot append to session {self._session_id!r}", exc
            ) from exc

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

    def close(self) -> None:
        """Release the lease (unless it was lost); idempotent. Never raises."""
        if self._closed:
            return
        self._closed = True
        self._holder.release(self._session_id, self._epoch)

    def __enter__(self) -> PostgresWriter:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
