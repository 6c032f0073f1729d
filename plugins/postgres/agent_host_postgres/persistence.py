"""``SessionPersistence`` on PostgreSQL (psycopg 3, a pool of synchronous connections).

* **Acknowledgement**: writers are ``QueuedWriter``s: the host's append thread
  (``agent_host_postgres.committer``) inserts each append's events in one statement, appends
  of several sessions that arrive together in one transaction and one round trip, and
  acknowledges each after the commit; an acknowledged append is then as durable as the
  server's configuration makes a commit (``synchronous_commit``). ``commit(durable=True)`` has
  nothing left to do. A failed append (encoding, ``seq`` order, database error) writes nothing.
* **One writer per session, across hosts**: a writer holds the session's fenced lease
  (``agent_host_postgres.leases``): ``open_writer`` and ``resume`` take it or fail with
  ``LOCKED`` while another holder's lease is live (in any process, this one included); every
  append checks the epoch in the same statement, so a holder whose lease was taken over can
  never write again. A heartbeat thread renews this host's leases; ``close`` releases them.
* **Reads**: ``list``, ``inspect`` and ``resume`` run on ``host.sessions.workers`` threads
  (as does ``create_async``, the store's creation of a session from the event loop),
  so the event loop never blocks on them. ``inspect`` and
  ``list`` never write and never take a lease; ``list`` decodes only header lines it has not
  seen before. ``resume`` has no torn tail to repair (a database has none): it reads the
  events under the lease it takes and hands that lease to its writer (one acquisition).
* **Connections** come from a pool (``agent_host_postgres.connections``): a connection that
  broke is replaced on the next use, so the store recovers by itself once the server is
  reachable again; until then calls fail with ``PERSISTENCE_FAILED`` after
  ``connect_timeout`` seconds.
* **Ids**: every entry point validates the session id before any SQL is sent.
* **Messages between hosts** are not the store's job: its ``inbox``
  (``agent_host_postgres.inbox.PostgresInbox``) queues them over the same pool, and ``close``
  closes it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

import psycopg

from agent_host_postgres import connections, leases
from agent_host_postgres.committer import Committer
from agent_host_postgres.inbox import PostgresInbox
from agent_host_postgres.schema import check_schema_name, migrate
from agent_host_postgres.writer import PostgresWriter, encode_bodies
from host.api import (
    CancelSignal,
    CodecError,
    Event,
    PersistenceError,
    Resumed,
    SessionHeader,
    StoredSession,
    decode_event,
    decode_header,
    encode_header,
    prepare_decoding,
    raise_if_cancelled,
    validate_session_id,
    workers,
)

__all__ = ["PostgresPersistence", "PostgresWriter"]


_UNKNOWN: Any = object()


class PostgresPersistence:
    """``SessionPersistence`` over PostgreSQL (module docstring: the policy).

    Construction connects once and applies the schema migrations; an unreachable database or
    a schema newer than this code is a ``PersistenceError`` (``PERSISTENCE_FAILED``).
    ``lease_ttl`` is how long (seconds, database clock) a lease outlives its last renewal;
    ``connect_timeout`` (seconds) bounds each connection attempt and each wait for a pooled
    connection; ``host_name`` starts the host id (``leases.new_host_id``), the machine's name
    by default; ``append_lanes`` is how many commits of appends may be in flight at once
    (``agent_host_postgres.committer``).
    """

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "agent_host",
        connect_timeout: int = 10,
        lease_ttl: float = 15.0,
        pool_size: int = 8,
        append_lanes: int = 2,
        host_name: str | None = None,
    ) -> None:
        self.dsn = dsn
        self.schema = check_schema_name(schema)
        if not lease_ttl > 0:
            raise ValueError(f"lease_ttl must be a positive number of seconds, not {lease_ttl!r}")
        self.host_id = leases.new_host_id(host_name)
        self.connect_timeout = connect_timeout
        self.lease_ttl = float(lease_ttl)
        try:
            with psycopg.connect(dsn, autocommit=True, connect_timeout=connect_timeout) as conn:
                self.schema_version = migrate(conn, self.schema)
        except (psycopg.Error, RuntimeError) as exc:
            raise PersistenceError.failed(
                "cannot prepare the PostgreSQL session store", exc
            ) from exc
        self._pool = connections.open_pool(
            dsn,
            schema=self.schema,
            host_id=self.host_id,
            size=pool_size,
            connect_timeout=connect_timeout,
        )
        self._holder = leases.LeaseHolder(self._pool.connection, self.host_id, self.lease_ttl)
        self._heartbeat = leases.Heartbeat(self._holder.beat, self.lease_ttl / 3)
        self._committer = Committer(self._pool.connection, max(1, append_lanes))
        self._heartbeat.ensure_started()  # now, not in the first request that takes a lease
        self.inbox = PostgresInbox(
            pool=self._pool,
            dsn=dsn,
            schema=self.schema,
            host_id=self.host_id,
            poll_interval=min(1.0, self.lease_ttl / 3),
            connect_timeout=connect_timeout,
        )
        # The last list's headers by (id, stored header line): a line decodes to the same
        # header wherever and whenever it is read, so only lines not seen before are decoded.
        self._listed: dict[tuple[str, str], SessionHeader | None] = {}
        workers.warm(prepare_decoding)

    # -- connections ---------------------------------------------------------------------

    def _connection(self, action: str) -> AbstractContextManager[psycopg.Connection[Any]]:
        """A pooled connection; database errors become ``PERSISTENCE_FAILED: <action>: …``."""
        return connections.connection(self._pool, action)

    def _acquire(self, conn: psycopg.Connection[Any], session_id: str) -> tuple[str, int]:
        """Take ``session_id``'s lease: its stored header line and the new epoch
        (``NOT_FOUND``, ``LOCKED`` if held); the caller calls ``self._holder.hold`` once the
        acquisition is committed."""
        acquired = self._holder.acquire(conn, session_id)
        if acquired is None:
            raise PersistenceError.not_found(session_id)
        header_line, epoch = acquired
        if epoch is None:
            raise PersistenceError.locked(session_id)
        return header_line, epoch

    # -- writers -------------------------------------------------------------------------

    def open_writer(
        self, header: SessionHeader, *, create: bool, events: Sequence[Event] = ()
    ) -> PostgresWriter:
        """See ``SessionPersistence.open_writer``: takes the session's lease."""
        sid = validate_session_id(header.id)
        if create:
            return self._create(header, events)
        if events:
            raise ValueError("initial events are only written with create=True")
        return self._reopen(sid, header)

    async def create_async(
        self, header: SessionHeader, events: Sequence[Event] = ()
    ) -> PostgresWriter:
        """See ``CreatingPersistence.create_async``: the insert runs on a worker thread. A
        cancelled caller's session stays stored if the insert committed; its lease is then
        released (the writer closed)."""
        validate_session_id(header.id)
        return await workers.opening(functools.partial(self._create, header, events))

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
        with self._connection(f"cannot create session {sid!r}") as conn:
            epoch = self._insert_new(conn, header, header_line, events, bodies)
        self._holder.hold(sid, epoch)
        return PostgresWriter(self._holder, self._committer.lane(), sid, epoch, len(events))

    def _insert_new(
        self,
        conn: psycopg.Connection[Any],
        header: SessionHeader,
        header_line: str,
        events: Sequence[Event],
        bodies: list[str],
    ) -> int:
        """Store the header, the lease and the initial events in one transaction."""
        sid = header.id
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
                raise PersistenceError.already_stored(sid)
            _, epoch = self._acquire(conn, sid)
            if events:
                cur.executemany(
                    "INSERT INTO events (session_id, seq, body) VALUES (%s, %s, %s)",
                    [(sid, e.seq, b) for e, b in zip(events, bodies, strict=True)],
                )
        return epoch

    def _reopen(self, sid: str, header: SessionHeader) -> PostgresWriter:
        with self._connection(f"cannot open session {sid!r}") as conn:
            header_line, epoch = self._acquire(conn, sid)  # before counting: nobody appends
            self._holder.hold(sid, epoch)
            try:
                if self._decode_header(sid, header_line) != header:
                    raise PersistenceError.corrupt(
                        sid, "stored header differs from the writer's header"
                    )
                last = conn.execute(
                    "SELECT max(seq), count(*) FROM events WHERE session_id = %s", (sid,)
                ).fetchone()
                assert last is not None
                if last[0] is not None and int(last[0]) + 1 != int(last[1]):
                    raise PersistenceError.corrupt(sid, "event seqs are not contiguous")
            except BaseException:
                self._holder.release(sid, epoch)
                raise
        return PostgresWriter(self._holder, self._committer.lane(), sid, epoch, int(last[1]))

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
            rows = self._event_rows(conn, sid)
        return self._stored(sid, row[0], rows)

    @staticmethod
    def _event_rows(conn: psycopg.Connection[Any], sid: str) -> list[tuple[int, str]]:
        return conn.execute(
            "SELECT seq, body FROM events WHERE session_id = %s ORDER BY seq", (sid,)
        ).fetchall()

    def _stored(self, sid: str, header_line: str, rows: list[tuple[int, str]]) -> StoredSession:
        """The stored session from its header line and event rows, up to the first row that
        is not the next event: rows are never torn, so damage anywhere is damage, not a tail."""
        header = self._decode_header(sid, header_line)
        events: list[Event] = []
        for index, (seq, body) in enumerate(rows):
            try:
                event = decode_event(body.encode("utf-8"))
            except CodecError:
                event = None
            if event is None or seq != index or event.seq != index:
                damage = f"event {index} cannot be decoded"
                return StoredSession(header, tuple(events), damage=damage)
            events.append(event)
        return StoredSession(header, tuple(events))

    def _inspect_sync(self, sid: str) -> StoredSession:
        with self._connection(f"cannot read session {sid!r}") as conn:
            return self._read(conn, sid)

    async def inspect(
        self, session_id: str, *, signal: CancelSignal | None = None
    ) -> StoredSession:
        """See ``SessionPersistence.inspect``: read-only."""
        sid = validate_session_id(session_id)
        raise_if_cancelled(signal, PersistenceError)
        stored = await workers.run(self._inspect_sync, sid)
        raise_if_cancelled(signal, PersistenceError)
        return stored

    def _resume_sync(self, sid: str, signal: CancelSignal | None) -> Resumed:
        with self._connection(f"cannot load session {sid!r}") as conn:
            header_line, epoch = self._acquire(conn, sid)
            self._holder.hold(sid, epoch)
            try:
                rows = self._event_rows(conn, sid)  # under the lease: nobody appends meanwhile
            except BaseException:
                self._holder.release(sid, epoch)
                raise
        try:
            stored = self._stored(sid, header_line, rows)
            if stored.damage is not None:
                raise PersistenceError.corrupt(sid, stored.damage)
            raise_if_cancelled(signal, PersistenceError)
        except BaseException:
            self._holder.release(sid, epoch)
            raise
        lane = self._committer.lane()
        return Resumed(stored, PostgresWriter(self._holder, lane, sid, epoch, len(stored.events)))

    async def resume(self, session_id: str, *, signal: CancelSignal | None = None) -> Resumed:
        """See ``SessionPersistence.resume``: one lease acquisition, handed to the writer."""
        sid = validate_session_id(session_id)
        raise_if_cancelled(signal, PersistenceError)
        return await workers.resume(self._resume_sync, sid, signal)

    def _list_sync(self) -> list[SessionHeader]:
        with self._connection("cannot list sessions") as conn:
            rows = conn.execute(
                "SELECT id, header FROM sessions ORDER BY created_at, id"
            ).fetchall()
        known = self._listed
        listed: dict[tuple[str, str], SessionHeader | None] = {}
        for key in rows:
            header = known.get(key, _UNKNOWN)
            if header is _UNKNOWN:
                try:
                    header = self._decode_header(*key)
                except PersistenceError:
                    header = None  # an unreadable header is not a session
            listed[key] = header
        self._listed = listed  # replaced whole: concurrent lists never see half of one
        return [header for header in listed.values() if header is not None]

    async def list(self, *, signal: CancelSignal | None = None) -> list[SessionHeader]:
        """See ``SessionPersistence.list``: headers only, sorted by ``(created_at, id)``."""
        raise_if_cancelled(signal, PersistenceError)
        headers = await workers.run(self._list_sync)
        raise_if_cancelled(signal, PersistenceError)
        return headers

    def close(self) -> None:
        """Stop the inbox's listeners and the heartbeat, close the pool; idempotent. Open writers'
        leases expire.

        The plugin calls it when it deactivates, which the host does after its agents shut
        down (so their final appends and lease releases still reach the database).
        """
        self.inbox.close()
        self._committer.stop()
        self._heartbeat.stop()
        self._pool.close()
