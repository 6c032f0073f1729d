"""The single writer of one PostgreSQL session, and how event bodies are encoded for it.

``append`` inserts its events in one transaction and returns after the commit (acknowledged);
a failure writes nothing. The writer's connection holds the session's advisory lock until
``close``.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress
from typing import Any

import psycopg

from host.sessions.codec import (
    encode_event,
)
from host.sessions.model import Event
from host.sessions.persistence import PersistenceError, check_append_order

__all__ = ["PostgresWriter", "encode_bodies"]


def encode_bodies(events: Sequence[Event]) -> list[str]:
    """Each event's codec line without its newline, all encoded before anything is written.

    (Encoded one by one: splitting a joined text on line breaks would also split at U+2028.)
    """
    return [encode_event(event).decode("utf-8")[:-1] for event in events]


class PostgresWriter:
    """The writer of one session; see ``SessionWriter`` for what each method promises."""

    def __init__(self, conn: psycopg.Connection[Any], session_id: str, next_seq: int) -> None:
        self._conn: psycopg.Connection[Any] | None = conn
        self._session_id = session_id
        self._next_seq = next_seq
        self._broken: str | None = None

    @property
    def session_id(self) -> str:
        """The session this writer appends to."""
        return self._session_id

    @property
    def next_seq(self) -> int:
        """The ``seq`` the next appended event must carry."""
        return self._next_seq

    def append(self, events: Sequence[Event]) -> None:
        """Encode all ``events``, check their ``seq``s, insert them in one transaction."""
        conn = self._check_usable()
        if not events:
            return
        check_append_order(self._session_id, self._next_seq, events)
        try:
            bodies = encode_bodies(events)
        except Exception as exc:
            raise PersistenceError.failed(
                f"cannot encode events of session {self._session_id!r}", exc
            ) from exc
        rows = [(self._session_id, e.seq, body) for e, body in zip(events, bodies, strict=True)]
        try:
            with conn.transaction(), conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO events (session_id, seq, body) VALUES (%s, %s, %s)", rows
                )
        except psycopg.Error as exc:
            if conn.closed or conn.broken:
                self._broken = f"the database connection was lost ({exc})"
            raise PersistenceError.failed(
                f"cannot append to session {self._session_id!r}", exc
            ) from exc
        self._next_seq += len(events)

    def commit(self, durable: bool = False) -> None:
        """Every append is already committed; only checks that the writer is usable."""
        self._check_usable()

    def _check_usable(self) -> psycopg.Connection[Any]:
        if self._conn is None:
            raise PersistenceError(
                PersistenceError.PERSISTENCE_FAILED,
                f"writer of session {self._session_id!r} is closed",
            )
        if self._broken is not None:
            raise PersistenceError(
                PersistenceError.PERSISTENCE_FAILED,
                f"writer of session {self._session_id!r} is unusable: {self._broken}",
            )
        return self._conn

    def close(self) -> None:
        """Close the connection, which releases the session lock; idempotent."""
        conn, self._conn = self._conn, None
        if conn is not None:
            with suppress(psycopg.Error):  # the server drops the lock with the connection
                conn.close()

    def __enter__(self) -> PostgresWriter:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
