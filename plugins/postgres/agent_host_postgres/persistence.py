"""``SessionPersistence`` on PostgreSQL (psycopg 3, synchronous connections).

* **Acknowledgement**: ``SessionWriter.append`` inserts its events in one transaction and
  returns after the commit; an acknowledged append is then as durable as the server's
  configuration makes a commit (``synchronous_commit``). ``commit(durable=True)`` has nothing
  left to do. A failed append (encoding, ``seq`` order, database error) writes nothing.
* **One writer per session**: the writer's own connection holds a session-level advisory lock
  keyed by a 64-bit hash of (schema, session id), taken without waiting; a holder in any
  process, including this one, makes ``open_writer`` and ``load`` fail with ``LOCKED``. The
  lock is released when the writer closes (or its connection dies). *This slice only*: the
  fenced leases of issue 10 replace this lock.
* **Reads**: ``list``, ``inspect`` and ``load`` use a short-lived synchronous connection in a
  worker thread (``asyncio.to_thread``), so the event loop never blocks on the database.
  ``inspect`` and ``list`` never write and never lock. ``load`` has no torn tail to repair
  (a database has none); it closes an open turn with ``TurnEnd(interrupted)`` under the lock.
* **Ids**: every entry point validates the session id before any SQL is sent.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import sql

from agent_host_postgres.schema import check_schema_name, migrate
from agent_host_postgres.writer import PostgresWriter, encode_bodies
from host.cancel import CancelSignal, raise_if_cancelled
from host.sessions.codec import (
    CodecError,
    decode_event,
    decode_header,
    encode_header,
)
from host.sessions.model import Event, SessionHeader, TurnEnd, validate_session_id
from host.sessions.persistence import PersistenceError, StoredSession, open_turn

__all__ = ["PostgresPersistence", "PostgresWriter"]


class PostgresPersistence:
    """``SessionPersistence`` over PostgreSQL (module docstring: the policy).

    Construction connects once and applies the schema migrations; an unreachable database or
    a schema newer than this code is a ``PersistenceError`` (``PERSISTENCE_FAILED``).
    """

    def __init__(self, dsn: str, *, schema: str = "agent_host", connect_timeout: int = 10) -> None:
        self._dsn = dsn
        self.schema = check_schema_name(schema)
        self._connect_timeout = connect_timeout
        try:
            with self._connect() as conn:
                self.schema_version = migrate(conn, self.schema)
        except PersistenceError:
            raise
        except (psycopg.Error, RuntimeError) as exc:
            raise PersistenceError.failed(
                "cannot prepare the PostgreSQL session store", exc
            ) from exc

    # -- connections ---------------------------------------------------------------------

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            conn = psycopg.connect(
                self._dsn, autocommit=True, connect_timeout=self._connect_timeout
            )
        except psycopg.Error as exc:
            raise PersistenceError.failed("cannot connect to PostgreSQL", exc) from exc
        try:
            conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(self.schema)))
        except psycopg.Error as exc:
            conn.close()
            raise PersistenceError.failed(
                "cannot configure the PostgreSQL connection", exc
            ) from exc
        return conn

    @contextmanager
    def _connection(self, action: str) -> Iterator[psycopg.Connection[Any]]:
        conn = self._connect()
        try:
            yield conn
        except psycopg.Error as exc:
            raise PersistenceError.failed(action, exc) from exc
        finally:
            conn.close()

    def _lock_key(self, session_id: str) -> int:
        digest = hashlib.blake2b(
            f"{self.schema}\x00{session_id}".encode(), digest_size=8, person=b"agenthost"
        ).digest()
        return int.from_bytes(digest, "big", signed=True)

    def _try_lock(self, conn: psycopg.Connection[Any], session_id: str) -> bool:
        row = conn.execute(
            "SELECT pg_try_advisory_lock(%s)", (self._lock_key(session_id),)
        ).fetchone()
        return bool(row and row[0])

    # -- writers -------------------------------------------------------------------------

    def open_writer(
        self, header: SessionHeader, *, create: bool, events: Sequence[Event] = ()
    ) -> PostgresWriter:
        """See ``SessionPersistence.open_writer``."""
        sid = validate_session_id(header.id)
        if create:
            return self._create(header, events)
        if events:
            raise ValueError("initial events are only written with create=True")
        return self._reopen(sid, header)

    def _create(self, header: SessionHeader, events: Sequence[Event]) -> PostgresWriter:
        sid = header.id
        try:
            header_line = encode_header(header).decode("utf-8").rstrip("\n")
            bodies = encode_bodies(events)
        except Exception as exc:
            raise PersistenceError.failed(f"cannot encode session {sid!r}", exc) from exc
        for index, event in enumerate(events):
            if event.seq != index:
                raise PersistenceError.failed(
                    f"cannot create session {sid!r}", ValueError("bad seq")
                )
        conn = self._connect()
        try:
            self._insert_new(conn, header, header_line, events, bodies)
        except BaseException:
            conn.close()
            raise
        return PostgresWriter(conn, sid, len(events))

    def _insert_new(
        self,
        conn: psycopg.Connection[Any],
        header: SessionHeader,
        header_line: str,
        events: Sequence[Event],
        bodies: list[str],
    ) -> None:
        sid = header.id
        try:
            if not self._try_lock(conn, sid):
                if self._exists(conn, sid):
                    raise self._already(sid)
                raise PersistenceError.locked(sid)
            with conn.transaction(), conn.cursor() as cur:
                cur.execute(
                    "INSERT INTO sessions (id, parent_session, created_at, origin,"
                    " delegation_depth, seed_length, header)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING",
                    (
                        sid,
                        header.parent_session,
                        header.created_at,
                        header.origin,
                        header.delegation_depth,
                        header.seed_length,
                        header_line,
                    ),
                )
                if cur.rowcount != 1:
                    raise self._already(sid)
                if events:
                    cur.executemany(
                        "INSERT INTO events (session_id, seq, body) VALUES (%s, %s, %s)",
                        [(sid, e.seq, b) for e, b in zip(events, bodies, strict=True)],
                    )
        except psycopg.Error as exc:
            raise PersistenceError.failed(f"cannot create session {sid!r}", exc) from exc

    @staticmethod
    def _already(session_id: str) -> PersistenceError:
        return PersistenceError.already_stored(session_id)

    @staticmethod
    def _exists(conn: psycopg.Connection[Any], session_id: str) -> bool:
        found = conn.execute("SELECT 1 FROM sessions WHERE id = %s", (session_id,)).fetchone()
        return found is not None

    def _reopen(self, sid: str, header: SessionHeader) -> PostgresWriter:
        conn = self._connect()
        try:
            next_seq = self._check_reopen(conn, sid, header)
        except BaseException:
            conn.close()
            raise
        return PostgresWriter(conn, sid, next_seq)

    def _check_reopen(self, conn: psycopg.Connection[Any], sid: str, header: SessionHeader) -> int:
        try:
            row = conn.execute("SELECT header FROM sessions WHERE id = %s", (sid,)).fetchone()
            if row is None:
                raise PersistenceError.not_found(sid)
            if not self._try_lock(conn, sid):
                raise PersistenceError.locked(sid)
            stored = self._decode_header(sid, row[0])
            if stored != header:
                raise PersistenceError.corrupt(
                    sid, "stored header differs from the writer's header"
                )
            last = conn.execute(
                "SELECT max(seq), count(*) FROM events WHERE session_id = %s", (sid,)
            ).fetchone()
        except psycopg.Error as exc:
            raise PersistenceError.failed(f"cannot open session {sid!r}", exc) from exc
        assert last is not None
        if last[0] is not None and int(last[0]) + 1 != int(last[1]):
            raise PersistenceError.corrupt(sid, "event seqs are not contiguous")
        return int(last[1])

    @staticmethod
    def _decode_header(sid: str, text: str) -> SessionHeader:
        try:
            header = decode_header(text.encode("utf-8"))
        except CodecError as exc:
            raise PersistenceError.corrupt(sid, str(exc)) from None
        if header.id != sid:
            raise PersistenceError.corrupt(sid, f"header names session {header.id!r}")
        return header

    # -- reads ---------------------------------------------------------------------------

    def _read(self, conn: psycopg.Connection[Any], sid: str) -> StoredSession:
        with conn.transaction():  # one snapshot for the header and the events
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            row = conn.execute("SELECT header FROM sessions WHERE id = %s", (sid,)).fetchone()
            if row is None:
                raise PersistenceError.not_found(sid)
            header = self._decode_header(sid, row[0])
            bodies = conn.execute(
                "SELECT seq, body FROM events WHERE session_id = %s ORDER BY seq", (sid,)
            ).fetchall()
        events: list[Event] = []
        valid = len(row[0]) + 1
        ignored = 0
        damaged = False
        for index, (seq, body) in enumerate(bodies):
            try:
                event = decode_event(body.encode("utf-8"))
            except CodecError:
                event = None
            if event is None or seq != index or event.seq != index:
                ignored = sum(len(b) + 1 for _, b in bodies[index:])
                damaged = True  # rows are never torn: damage anywhere is damage, not a tail
                break
            events.append(event)
            valid += len(body) + 1
        return StoredSession(
            header, tuple(events), valid_bytes=valid, ignored_bytes=ignored, damaged_middle=damaged
        )

    def _inspect_sync(self, sid: str) -> StoredSession:
        with self._connection(f"cannot read session {sid!r}") as conn:
            return self._read(conn, sid)

    async def inspect(
        self, session_id: str, *, signal: CancelSignal | None = None
    ) -> StoredSession:
        """See ``SessionPersistence.inspect``: read-only."""
        sid = validate_session_id(session_id)
        raise_if_cancelled(signal, PersistenceError)
        stored = await asyncio.to_thread(self._inspect_sync, sid)
        raise_if_cancelled(signal, PersistenceError)
        return stored

    def _load_sync(self, sid: str, signal: CancelSignal | None) -> StoredSession:
        with self._connection(f"cannot load session {sid!r}") as conn:
            if not self._exists(conn, sid):
                raise PersistenceError.not_found(sid)
            if not self._try_lock(conn, sid):
                raise PersistenceError.locked(sid)
            stored = self._read(conn, sid)
            if stored.damaged_middle:
                raise PersistenceError.corrupt(sid, f"event {len(stored.events)} cannot be decoded")
            raise_if_cancelled(signal, PersistenceError)
            turn = open_turn(stored.events)
            events = stored.events
            if turn is not None:
                closing = Event(len(events), TurnEnd(turn_id=turn, stop_reason="interrupted"))
                body = encode_bodies([closing])[0]
                conn.execute(
                    "INSERT INTO events (session_id, seq, body) VALUES (%s, %s, %s)",
                    (sid, closing.seq, body),
                )
                events = (*events, closing)
            # closing the connection releases the lock
        return StoredSession(
            stored.header,
            events,
            valid_bytes=stored.valid_bytes,
            closed_turn=turn,
        )

    async def load(self, session_id: str, *, signal: CancelSignal | None = None) -> StoredSession:
        """See ``SessionPersistence.load``: close an open turn, under the session lock."""
        sid = validate_session_id(session_id)
        raise_if_cancelled(signal, PersistenceError)
        return await asyncio.to_thread(self._load_sync, sid, signal)

    def _list_sync(self) -> list[SessionHeader]:
        with self._connection("cannot list sessions") as conn:
            rows = conn.execute(
                "SELECT id, header FROM sessions ORDER BY created_at, id"
            ).fetchall()
        headers: list[SessionHeader] = []
        for sid, text in rows:
            try:
                headers.append(self._decode_header(sid, text))
            except PersistenceError:
                continue  # an unreadable header is not a session
        return headers

    async def list(self, *, signal: CancelSignal | None = None) -> list[SessionHeader]:
        """See ``SessionPersistence.list``: headers only, sorted by ``(created_at, id)``."""
        raise_if_cancelled(signal, PersistenceError)
        headers = await asyncio.to_thread(self._list_sync)
        raise_if_cancelled(signal, PersistenceError)
        return headers

    def close(self) -> None:
        """Nothing is pooled: every call opens and closes its own connection."""
