"""Fenced leases: which host owns a session, until when, under which epoch.

One row per session that was ever materialized (table ``leases``): ``owner`` is the host id of
the holder, or NULL once released; ``epoch`` grows by one at every acquisition and is never
reset; ``status`` is ``running`` while a turn is open, else ``idle``; ``expires_at`` is set
from the database clock, so hosts never compare their own clocks.

* **Acquire** succeeds only when nobody holds a live lease (no owner, or expired); it takes the
  next epoch. A live lease of another host — or of another writer in this host — means
  ``LOCKED``.
* **Fencing**: every append renews the lease and inserts its events in one statement that
  matches ``owner`` *and* ``epoch``; after a takeover the old holder's statement matches
  nothing and writes nothing, so a paused or partitioned host can never write again.
* **Heartbeat**: one thread per host renews the leases of its open writers, every third of
  the time to live (and retries releases that failed). A host that stops heartbeating
  (killed, paused, cut off) loses its leases when they expire; another host may then take
  them over with a higher epoch.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import psycopg

from agent_host_postgres.connections import one_line
from host.api import QUEUED_PREFIX, Event, InboxAccepted, TurnEnd, TurnStart

log = logging.getLogger(__name__)

Connect = Callable[[], AbstractContextManager[psycopg.Connection[Any]]]
Released = Callable[[], None]

ACQUIRE = """
WITH stored AS (
    SELECT header FROM sessions WHERE id = %(sid)s
), acquired AS (
    INSERT INTO leases (session_id, owner, epoch, status, expires_at)
    SELECT %(sid)s, %(owner)s, 1, 'idle', now() + make_interval(secs => %(ttl)s) FROM stored
    ON CONFLICT (session_id) DO UPDATE
       SET owner = EXCLUDED.owner, epoch = leases.epoch + 1, status = 'idle',
           expires_at = EXCLUDED.expires_at
     WHERE leases.owner IS NULL OR leases.expires_at <= now()
    RETURNING epoch
)
SELECT stored.header, (SELECT epoch FROM acquired) FROM stored
"""

FENCED_INSERT = """
WITH lease AS (
    UPDATE leases
       SET expires_at = greatest(expires_at, now() + make_interval(secs => %(ttl)s)),
           status = coalesce(%(status)s, status)
     WHERE session_id = %(sid)s AND owner = %(owner)s AND epoch = %(epoch)s
 RETURNING 1
), delivered AS (
    DELETE FROM remote_inbox
     WHERE session_id = %(sid)s AND message_id = ANY(%(queued)s::text[])
       AND EXISTS (SELECT 1 FROM lease)
 RETURNING 1
), inserted AS (
    INSERT INTO events (session_id, seq, body)
    SELECT %(sid)s, seq, body
      FROM unnest(%(seqs)s::bigint[], %(bodies)s::text[]) AS batch (seq, body)
     WHERE EXISTS (SELECT 1 FROM lease)
    RETURNING 1
)
SELECT (SELECT count(*) FROM inserted), (SELECT count(*) FROM delivered)
"""

FENCED_INSERT_MANY = """
WITH batch AS (
    SELECT * FROM unnest(%(sids)s::text[], %(epochs)s::bigint[], %(statuses)s::text[])
        AS b (sid, epoch, status)
), lease AS (
    UPDATE leases
       SET expires_at = greatest(leases.expires_at, now() + make_interval(secs => %(ttl)s)),
           status = coalesce(batch.status, leases.status)
      FROM batch
     WHERE leases.session_id = batch.sid AND leases.owner = %(owner)s
       AND leases.epoch = batch.epoch
 RETURNING leases.session_id
), inserted AS (
    INSERT INTO events (session_id, seq, body)
    SELECT e.sid, e.seq, e.body
      FROM unnest(%(event_sids)s::text[], %(seqs)s::bigint[], %(bodies)s::text[])
        AS e (sid, seq, body)
     WHERE e.sid IN (SELECT session_id FROM lease)
    RETURNING session_id
)
SELECT session_id, count(*) FROM inserted GROUP BY session_id
"""
"""``FENCED_INSERT`` for the appends of several sessions at once (one lease row each)."""

FENCED_CLEAR = """
DELETE FROM events
 WHERE session_id = %(sid)s AND seq >= %(clear_from)s
   AND EXISTS (SELECT 1 FROM leases
                WHERE session_id = %(sid)s AND owner = %(owner)s AND epoch = %(epoch)s)
"""
"""Deletes what an append whose outcome is unknown may have left (``PostgresWriter``)."""

RELEASE = """
UPDATE leases SET owner = NULL, status = 'idle', expires_at = now()
 WHERE session_id = %s AND owner = %s AND epoch = %s
"""

RENEW = """
UPDATE leases SET expires_at = now() + make_interval(secs => %(ttl)s)
 WHERE session_id IN (
       SELECT session_id FROM leases
        WHERE owner = %(owner)s
          AND (session_id, epoch) IN (SELECT * FROM unnest(%(sids)s::text[], %(epochs)s::bigint[]))
          FOR NO KEY UPDATE SKIP LOCKED)
RETURNING session_id
"""
"""Renews the held leases, skipping rows another statement has locked: a group of appends
renews its own rows and locks several at once, so a renewal that waited for them could
deadlock with it (each holding a row the other wants); one that never waits cannot. Returns
the sessions renewed."""

SPEAKS = """
SELECT 1 FROM leases
 WHERE session_id = %(sid)s AND epoch = %(epoch)s AND (owner = %(owner)s OR owner IS NULL)
"""
"""Whether a lease ``epoch`` this host held is still the session's last: held by this host, or
released by it, and not acquired since (an acquisition takes the next epoch). An expired
lease nobody took yet still counts, as it does for appends. (A release in order is final,
whoever acquires after it: the writer knows it gave the lease up and reads nothing.)"""

RESIDENCY = """
SELECT session_id, status FROM leases
 WHERE session_id = ANY(%s) AND owner IS NOT NULL AND expires_at > now()
"""


def new_host_id(name: str | None = None) -> str:
    """A host id unique across hosts and restarts, readable in the table:
    ``<name>:<pid>:<8 random hex digits>``, ``name`` defaulting to the machine's host name
    (the suffix keeps two processes given the same name apart)."""
    return f"{name or socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def status_after(events: Sequence[Event]) -> str | None:
    """``running`` if ``events`` leave a turn open, ``idle`` if they close one, else None."""
    for event in reversed(events):
        if isinstance(event.body, TurnEnd):
            return "idle"
        if isinstance(event.body, TurnStart):
            return "running"
    return None


def queued_ids(events: Sequence[Event]) -> list[str]:
    """The ids of the queued messages (``QUEUED_PREFIX``) whose acceptance ``events`` record."""
    return [
        e.body.message_id
        for e in events
        if isinstance(e.body, InboxAccepted) and e.body.message_id.startswith(QUEUED_PREFIX)
    ]


class AlreadyDelivered(Exception):
    """A queued message in the batch is no longer queued: another holder accepted it."""


class Heartbeat:
    """A daemon thread that calls ``renew`` every ``interval`` seconds until stopped.

    A failed renewal is logged and retried at the next beat; only expiry loses a lease.
    """

    def __init__(self, renew: Callable[[], None], interval: float) -> None:
        self._renew = renew
        self._interval = interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def ensure_started(self) -> None:
        """Start the thread once (idempotent; never after ``stop``). With no lease held a
        beat sends nothing."""
        with self._lock:
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(
                    target=self._run, name="agent-host-lease-heartbeat", daemon=True
                )
                self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self._renew()
            except Exception as exc:  # the next beat retries; expiry is the only loss
                log.warning("lease heartbeat failed: %s", one_line(exc))

    def stop(self) -> None:
        """Stop beating and wait (boundedly) for the thread; idempotent."""
        with self._lock:
            self._stop.set()
            thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=self._interval + 10)


def acquire(
    conn: psycopg.Connection[Any], session_id: str, owner: str, ttl: float
) -> tuple[str, int | None] | None:
    """Take the lease of ``session_id`` for ``owner`` in one statement that also reads the
    stored header line: ``(header, new epoch)``, ``(header, None)`` if another holder's lease
    is live, ``None`` if no such session is stored."""
    row = conn.execute(ACQUIRE, {"sid": session_id, "owner": owner, "ttl": ttl}).fetchone()
    if row is None:
        return None
    return str(row[0]), None if row[1] is None else int(row[1])


def fenced_insert(conn: psycopg.Connection[Any], plan: dict[str, Any]) -> bool:
    """Insert one append's events (``PostgresWriter.plan``) if its writer still holds its
    epoch (renewing it); False if not.

    The ids in ``plan["queued"]`` (queued messages the events accept) leave ``remote_inbox``
    in the same statement, and if one of them is not there any more (another holder accepted
    it first) nothing is written and ``AlreadyDelivered`` is raised — exactly once. A
    ``clear_from`` seq first deletes the session's events from there on (under the lease).
    """
    if not plan["queued"] and plan["clear_from"] is None:
        return _inserted(conn.execute(FENCED_INSERT, plan).fetchone(), plan)
    with conn.transaction():
        if plan["clear_from"] is not None:
            conn.execute(FENCED_CLEAR, plan)
        row = conn.execute(FENCED_INSERT, plan).fetchone()
        if not _inserted(row, plan):
            return False  # the lease is gone: nothing was written or deleted
        assert row is not None
        if row[1] != len(plan["queued"]):
            raise AlreadyDelivered(plan["sid"])  # rolls the statement back
    return True


def fenced_insert_many(
    conn: psycopg.Connection[Any], plans: Sequence[dict[str, Any]]
) -> list[bool]:
    """``fenced_insert`` of several appends of this host's writers (none accepting queued
    messages; a writer's appends in ``seq`` order) as one statement — after the clears some
    need, in the same transaction and round trip — so all are committed or none; each
    result says whether its writer still held its lease."""
    events: dict[str, int] = {}
    batch: dict[str, tuple[int, str | None]] = {}
    for plan in plans:
        sid = plan["sid"]
        events[sid] = events.get(sid, 0) + len(plan["seqs"])
        status = plan["status"] or batch.get(sid, (0, None))[1]
        batch[sid] = (plan["epoch"], status)
    params = {
        "owner": plans[0]["owner"],
        "ttl": plans[0]["ttl"],
        "sids": list(batch),
        "epochs": [epoch for epoch, _ in batch.values()],
        "statuses": [status for _, status in batch.values()],
        "event_sids": [plan["sid"] for plan in plans for _ in plan["seqs"]],
        "seqs": [seq for plan in plans for seq in plan["seqs"]],
        "bodies": [body for plan in plans for body in plan["bodies"]],
    }
    clears = [plan for plan in plans if plan["clear_from"] is not None]
    if clears:
        with conn.pipeline(), conn.transaction():
            for plan in clears:
                conn.execute(FENCED_CLEAR, plan)
            cursor = conn.execute(FENCED_INSERT_MANY, params)
    else:
        cursor = conn.execute(FENCED_INSERT_MANY, params)
    inserted = dict(cursor.fetchall())
    return [inserted.get(plan["sid"]) == events[plan["sid"]] for plan in plans]


def _inserted(row: tuple[Any, ...] | None, plan: dict[str, Any]) -> bool:
    return row is not None and row[0] == len(plan["seqs"])


def release(conn: psycopg.Connection[Any], session_id: str, owner: str, epoch: int) -> bool:
    """Give the lease up: True if it was, in order (this owner, this epoch); False (no-op)
    when it was already taken over."""
    return conn.execute(RELEASE, (session_id, owner, epoch)).rowcount == 1


def renew(
    conn: psycopg.Connection[Any], owner: str, ttl: float, held: dict[str, int]
) -> set[str]:
    """Extend the leases ``held`` (session id → epoch) if ``owner`` still holds them; the
    sessions whose lease was extended."""
    params = {"ttl": ttl, "owner": owner, "sids": list(held), "epochs": list(held.values())}
    return {str(row[0]) for row in conn.execute(RENEW, params).fetchall()}


def clock() -> float:
    """Seconds on a clock that never goes back and runs on while the machine is suspended
    (as a lease does): ``CLOCK_BOOTTIME`` on Linux, else the monotonic clock."""
    if sys.platform == "linux":
        return time.clock_gettime(time.CLOCK_BOOTTIME)
    return time.monotonic()


class LeaseHolder:
    """This host's leases: the ones its writers hold, which the heartbeat renews, and the
    ones it failed to release (the database was unreachable), which the heartbeat retries.

    Only leases of open writers are renewed, so a lease whose release failed still expires.
    Thread-safe: the heartbeat thread calls ``beat``.

    A renewal extends a lease to the database's ``now()`` plus the TTL, and that ``now()`` is
    not earlier than this host's clock when the renewal was sent; so for a TTL after that
    moment nobody can have taken the lease (``fresh``), and this host need not ask.
    """

    def __init__(self, connect: Connect, owner: str, ttl: float) -> None:
        self.connect = connect
        self.owner = owner
        self.ttl = ttl
        self._held: dict[str, int] = {}
        self._renewed: dict[str, tuple[int, float]] = {}  # → (epoch, ``clock`` when sent)
        self._unreleased: dict[str, tuple[int, Released | None]] = {}
        self._lock = threading.Lock()

    def acquire(
        self, conn: psycopg.Connection[Any], session_id: str
    ) -> tuple[str, int | None] | None:
        """Take the lease of ``session_id`` on ``conn`` (see ``acquire``); call ``hold``
        once the acquisition is committed."""
        return acquire(conn, session_id, self.owner, self.ttl)

    def hold(self, session_id: str, epoch: int) -> None:
        """Renew the lease ``epoch`` of ``session_id`` from now on (until ``release``)."""
        with self._lock:
            self._held[session_id] = epoch

    def release(self, session_id: str, epoch: int, released: Released | None = None) -> None:
        """Stop renewing and give the lease up; never raises (a failed release is retried by
        the next ``beat``, and the lease expires meanwhile). ``released`` is called once the
        lease is given up in order — now or at a retry — never when it was taken over."""
        with self._lock:
            if self._held.get(session_id) == epoch:
                del self._held[session_id]
                self._renewed.pop(session_id, None)
        try:
            with self.connect() as conn:
                done = release(conn, session_id, self.owner, epoch)
        except Exception:
            with self._lock:
                self._unreleased[session_id] = (epoch, released)
            return
        if done and released is not None:
            released()

    def fresh(self, session_id: str, epoch: int) -> bool:
        """True while the last renewal of the held lease ``epoch`` was sent less than the TTL
        ago (see the class docstring): nobody can have taken it since."""
        with self._lock:
            renewed = self._renewed.get(session_id)
        return renewed is not None and renewed[0] == epoch and clock() - renewed[1] < self.ttl

    def speaks(self, session_id: str, epoch: int) -> bool:
        """True while the lease ``epoch`` of ``session_id`` was not taken over (``SPEAKS``)."""
        params = {"sid": session_id, "epoch": epoch, "owner": self.owner}
        with self.connect() as conn:
            return conn.execute(SPEAKS, params).fetchone() is not None

    def beat(self) -> None:
        """Renew the held leases and retry the failed releases (one connection)."""
        with self._lock:
            held, unreleased = dict(self._held), dict(self._unreleased)
        if not held and not unreleased:
            return
        with self.connect() as conn:
            if held:
                sent = clock()
                renewed = renew(conn, self.owner, self.ttl, held)
                with self._lock:
                    for session_id in renewed:
                        if self._held.get(session_id) == held[session_id]:
                            self._renewed[session_id] = (held[session_id], sent)
            for session_id, (epoch, released) in unreleased.items():
                done = release(conn, session_id, self.owner, epoch)
                with self._lock:
                    if self._unreleased.get(session_id, (None, None))[0] == epoch:
                        del self._unreleased[session_id]
                if done and released is not None:
                    released()


def residency(conn: psycopg.Connection[Any], session_ids: Sequence[str]) -> dict[str, str]:
    """``running``/``idle`` of each session in ``session_ids`` held by a live lease."""
    rows = conn.execute(RESIDENCY, (list(session_ids),)).fetchall()
    return {str(sid): str(status) for sid, status in rows}
