"""Cross-host delivery on PostgreSQL (``PostgresInbox``): the ``remote_inbox`` queue, NOTIFY and
a listener.

* **Send**: one statement checks that another host holds a live lease on the target (locking
  the lease row, so it cannot be released meanwhile) and that the sender's lease epoch (the
  ``Voice`` of the session the message is sent on behalf of) was not taken over since (locking
  that row too), queues the message and ``NOTIFY``s channel ``agent_host_inbox`` with
  ``<schema> <holder's host id>``; the notification goes out with the commit, and only the
  holder acts on it. A sender that was taken over queues nothing (``LOCKED``).
* **Deliver**: the holder reads what is queued for the sessions it holds (and its own orphans),
  accepts each message into the session's inbox; the append that records the acceptance also
  deletes the queued row (``leases.fenced_insert``), so a message is delivered exactly once.
* **Listen**: one thread per host keeps a connection ``LISTEN``ing and wakes the host on every
  notification naming it, and every ``interval`` seconds anyway (a notification missed while
  reconnecting is then picked up by polling; so are orphans, which nobody notifies). A lost
  connection is retried. Other hosts' notifications cost a look at the payload, no query.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import psycopg
from psycopg_pool import ConnectionPool

from agent_host_postgres import leases
from agent_host_postgres.connections import connection, one_line
from host.api import (
    CancelSignal,
    PersistenceError,
    RemoteMessage,
    Voice,
    raise_if_cancelled,
    validate_session_id,
    workers,
)

log = logging.getLogger(__name__)

CHANNEL = "agent_host_inbox"
STOP_LATENCY = 0.2  # seconds: how often the listener looks up from its connection to stop

SEND = """
WITH speaker AS (
    SELECT 1 FROM leases
     WHERE session_id = %(speaker)s AND epoch = %(sender_epoch)s
       AND (owner = %(me)s OR owner IS NULL)
       FOR SHARE
), holder AS (
    SELECT owner FROM leases
     WHERE session_id = %(sid)s AND owner IS NOT NULL AND owner <> %(me)s
       AND expires_at > now()
       FOR SHARE
), queued AS (
    INSERT INTO remote_inbox
        (message_id, session_id, delivery, content, source, sender_host, sender_session)
    SELECT %(mid)s, %(sid)s, %(delivery)s, %(content)s, %(source)s, %(me)s, %(sender)s
     WHERE EXISTS (SELECT 1 FROM holder)
       AND (NOT %(fenced)s OR EXISTS (SELECT 1 FROM speaker))
    RETURNING session_id
)
SELECT NOT %(fenced)s OR EXISTS (SELECT 1 FROM speaker),
       (SELECT count(pg_notify(%(channel)s, %(schema)s || ' ' || holder.owner))
          FROM queued, holder)
"""
"""Queues a message if another host holds its target and — for a message sent on behalf of a
session (``fenced``) — if the sender's lease epoch is still that session's last (see
``leases.SPEAKS``; the row is locked, so no takeover can come between): (speaks, queued)."""

PENDING = """
SELECT r.message_id, r.session_id, r.delivery, r.content, r.source, r.sender_session,
       (l.owner IS NULL OR l.expires_at <= now()) AS orphan
  FROM remote_inbox r LEFT JOIN leases l ON l.session_id = r.session_id
 WHERE (l.owner = %(me)s AND l.expires_at > now())
    OR (r.sender_host = %(me)s AND (l.owner IS NULL OR l.expires_at <= now()))
 ORDER BY r.seq
"""


def send(
    conn: psycopg.Connection[Any],
    *,
    schema: str,
    me: str,
    message: RemoteMessage,
    voice: Voice | None,
) -> bool:
    """Queue and notify if another host holds the message's session; False when none does.
    ``PersistenceError`` ``LOCKED`` (nothing queued) when ``voice``'s session was taken over.
    A voice whose writer released its lease in order has nothing left to check (``fence``)."""
    epoch = None if voice is None else voice.fence()
    row = conn.execute(
        SEND,
        {
            "sid": message.session_id,
            "me": me,
            "mid": message.message_id,
            "delivery": message.delivery,
            "content": message.content,
            "source": None if message.source is None else json.dumps(message.source),
            "sender": message.sender_session,
            "fenced": epoch is not None,
            "speaker": None if voice is None else voice.session_id,
            "sender_epoch": epoch,
            "channel": CHANNEL,
            "schema": schema,
        },
    ).fetchone()
    assert row is not None
    speaks, queued = row
    if not speaks:
        assert voice is not None
        raise PersistenceError.fenced(voice.session_id)
    return bool(queued)


def pending(conn: psycopg.Connection[Any], me: str) -> list[RemoteMessage]:
    """What host ``me`` must deliver, oldest first (see ``RemoteInbox.pending_remote``)."""
    rows = conn.execute(PENDING, {"me": me}).fetchall()
    return [
        RemoteMessage(
            message_id=mid,
            session_id=sid,
            delivery=delivery,
            content=content,
            source=None if source is None else json.loads(source),
            sender_session=sender,
            orphan=bool(orphan),
        )
        for mid, sid, delivery, content, source, sender, orphan in rows
    ]


class Listener:
    """The thread that ``LISTEN``s for host ``me`` of one schema and calls ``wake`` (module
    docstring)."""

    def __init__(
        self,
        dsn: str,
        schema: str,
        me: str,
        wake: Callable[[], None],
        *,
        interval: float = 1.0,
        connect_timeout: int = 10,
    ) -> None:
        self._dsn = dsn
        self._connect_timeout = connect_timeout
        self._payload = f"{schema} {me}"
        self._wake = wake
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="agent-host-listen", daemon=True)

    def start(self) -> Listener:
        """Start listening; returns self."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop (within ``STOP_LATENCY`` while connected); idempotent."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=self._interval + 15)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._listen()
            except Exception as exc:
                log.warning("listening for cross-host messages failed, retrying: %s", one_line(exc))
                self._stop.wait(self._interval)

    def _listen(self) -> None:
        with psycopg.connect(
            self._dsn, autocommit=True, connect_timeout=self._connect_timeout
        ) as conn:
            conn.execute(f"LISTEN {CHANNEL}")
            self._wake()  # catch up on what was queued while not listening
            next_poll = time.monotonic() + self._interval
            while not self._stop.is_set():
                for note in conn.notifies(timeout=min(STOP_LATENCY, self._interval)):
                    if note.payload == self._payload:
                        self._wake()
                    if self._stop.is_set():
                        return
                if time.monotonic() >= next_poll:
                    self._wake()  # the periodic poll
                    next_poll = time.monotonic() + self._interval


@attrs.define(kw_only=True)
class PostgresInbox:
    """``host.sessions.remote.RemoteInbox`` on PostgreSQL (module docstring): the cross-host
    inbox of host ``host_id``, over the session store's connection ``pool``.

    ``PostgresPersistence`` builds it as its ``inbox`` and closes it in its own ``close``.
    ``poll_interval`` (seconds) is how often a listener wakes its host anyway.
    """

    pool: ConnectionPool[psycopg.Connection[Any]] = attrs.field(repr=False)
    dsn: str = attrs.field(repr=False)
    schema: str
    host_id: str
    poll_interval: float
    connect_timeout: int
    _listeners: list[Listener] = attrs.field(factory=list, init=False, repr=False)

    async def send_remote(self, message: RemoteMessage, voice: Voice | None) -> bool:
        """See ``RemoteInbox.send_remote``: fenced by ``voice``, queued and notified in one
        statement."""
        sid = validate_session_id(message.session_id)

        def queue() -> bool:
            with connection(self.pool, f"cannot send a message to session {sid!r}") as conn:
                return send(
                    conn, schema=self.schema, me=self.host_id, message=message, voice=voice
                )

        return await workers.run(queue)

    async def residency(
        self, session_ids: Sequence[str], *, signal: CancelSignal | None = None
    ) -> dict[str, str]:
        """See ``RemoteInbox.residency``: one query; sessions absent from the result are held
        by nobody (``ready``)."""
        ids = [validate_session_id(sid) for sid in session_ids]
        raise_if_cancelled(signal, PersistenceError)
        if not ids:
            return {}

        def read() -> dict[str, str]:
            with connection(self.pool, "cannot read session leases") as conn:
                return leases.residency(conn, ids)

        return await workers.run(read)

    async def pending_remote(self) -> list[RemoteMessage]:
        """See ``RemoteInbox.pending_remote``."""

        def read() -> list[RemoteMessage]:
            with connection(self.pool, "cannot read queued messages") as conn:
                return pending(conn, self.host_id)

        return await workers.run(read)

    def watch(self, wake: Callable[[], None]) -> Callable[[], None]:
        """See ``RemoteInbox.watch``: a LISTEN thread, polling every ``poll_interval``."""
        listener = Listener(
            self.dsn,
            self.schema,
            self.host_id,
            wake,
            interval=self.poll_interval,
            connect_timeout=self.connect_timeout,
        )
        self._listeners.append(listener.start())
        return listener.stop

    def close(self) -> None:
        """Stop every listener ``watch`` started; idempotent."""
        for listener in self._listeners:
            listener.stop()
