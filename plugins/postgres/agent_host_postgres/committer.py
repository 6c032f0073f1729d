"""Group commit: one thread per host writes the appends of all its sessions.

Writers queue their appends here (``Committer.submit``); the thread writes them in submission
order, so the appends of one session reach the database in ``seq`` order whoever waits for
them. Whatever is queued when the thread takes its next batch is written together: the plain
appends of several sessions as one transaction sent in one round trip (a psycopg pipeline),
so ten agents appending at once cost one commit, not ten. An append that accepts a queued
remote message is written on its own (its exactly-once check may roll its transaction back).

Each future resolves after its transaction's commit — with ``LOCKED`` if the writer's lease
was taken over, or ``PERSISTENCE_FAILED`` on one line if the database failed (then none of
that transaction's appends is acknowledged, and a lost connection leaves each writer to clear
what may have been written; see ``agent_host_postgres.writer``). A database error that is not
the connection's (a constraint, say) fails only the append that caused it: the batch is then
written again one append at a time.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from contextlib import AbstractContextManager
from typing import Any

import attrs
import psycopg
from psycopg_pool import PoolClosed, PoolTimeout

from agent_host_postgres import leases
from agent_host_postgres.writer import PostgresWriter
from host.api import Event, PersistenceError

__all__ = ["Committer", "Lane"]

log = logging.getLogger(__name__)

Connect = Callable[[], AbstractContextManager[psycopg.Connection[Any]]]


@attrs.frozen
class _Append:
    writer: PostgresWriter
    events: Sequence[Event]
    future: Future[None] = attrs.field(eq=False)


@attrs.frozen
class _Planned:
    append: _Append
    plan: dict[str, Any]


class Committer:
    """The host's append lanes: each writer gets one, in turn, and keeps it, so the appends of
    one session are written in order while two lanes can each have a commit in flight."""

    def __init__(self, connect: Connect, lanes: int = 2) -> None:
        self._lanes = [Lane(connect, f"agent-host-postgres-commit-{n}") for n in range(lanes)]
        self._turn = itertools.count()

    def lane(self) -> Lane:
        """The lane for a new writer."""
        return self._lanes[next(self._turn) % len(self._lanes)]

    def stop(self) -> None:
        """Stop every lane (``Lane.stop``)."""
        for lane in self._lanes:
            lane.stop()


class Lane:
    """One append thread (module docstring); started by the first ``submit``."""

    def __init__(self, connect: Connect, name: str) -> None:
        self._connect = connect
        self._name = name
        self._queue: queue.SimpleQueue[_Append | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopped = False

    def submit(self, writer: PostgresWriter, events: Sequence[Event]) -> Future[None]:
        """Queue ``writer``'s append of ``events``; the future of its acknowledgement."""
        future: Future[None] = Future()
        with self._lock:
            if self._stopped:
                future.set_exception(
                    PersistenceError.failed(
                        f"cannot append to session {writer.session_id!r}",
                        "the session store is closed",
                    )
                )
                return future
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            self._queue.put(_Append(writer, events, future))
        return future

    def write_now(self, writer: PostgresWriter, events: Sequence[Event]) -> None:
        """Write ``writer``'s append on the calling thread and return after its commit (or
        raise). Only for a writer with nothing queued: its appends stay in order, and other
        sessions' queued appends do not need to come first."""
        append = _Append(writer, events, Future())
        append.future.set_running_or_notify_cancel()
        self._commit([append])
        append.future.result()

    def stop(self) -> None:
        """Write what is queued, then stop the thread; idempotent. Later appends fail."""
        with self._lock:
            self._stopped = True
            thread, self._thread = self._thread, None
            if thread is not None:
                self._queue.put(None)
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            batch = [first]
            while not self._queue.empty():
                batch.append(self._queue.get_nowait())
            appends = [item for item in batch if item is not None]
            try:
                self._write(appends)
            except Exception as exc:  # a bug: fail what is unresolved, keep the thread
                log.exception("the PostgreSQL append thread failed")
                for append in appends:
                    if not append.future.done():
                        _fail(append, exc)
            if None in batch:
                return

    def _write(self, appends: Sequence[_Append]) -> None:
        """Write ``appends`` in order: runs of plain ones together, the others alone."""
        together: list[_Append] = []
        for append in appends:
            if not append.future.set_running_or_notify_cancel():
                continue
            if leases.queued_ids(append.events):
                self._commit(together)
                together = []
                self._commit([append])
            else:
                together.append(append)
        self._commit(together)

    def _commit(self, appends: Sequence[_Append]) -> None:
        """Plan ``appends`` (their futures running), write them in one transaction, resolve."""
        planned = _plan(appends)
        if not planned:
            return
        try:
            held = self._insert(planned)
        except (PoolTimeout, PoolClosed) as exc:  # no connection: nothing was sent
            _fail_all(planned, exc, unknown=False)
        except psycopg.Error as exc:
            unknown = outcome_unknown(exc)
            if len(planned) > 1 and not unknown:
                # Rolled back (a constraint, a deadlock with the heartbeat): write them one
                # at a time, so only an append at fault fails.
                for item in planned:
                    self._commit([item.append])
                return
            _fail_all(planned, exc, unknown=unknown)
        except leases.AlreadyDelivered:
            _fail(planned[0].append, "a queued message in the batch was already delivered")
        else:
            for item, ok in zip(planned, held, strict=True):
                writer = item.append.writer
                if ok:
                    writer.written(len(item.append.events))
                    item.append.future.set_result(None)
                else:
                    item.append.future.set_exception(writer.lost_lease())

    def _insert(self, planned: Sequence[_Planned]) -> list[bool]:
        with self._connect() as conn:
            if len(planned) == 1:
                return [leases.fenced_insert(conn, planned[0].plan)]
            return leases.fenced_insert_many(conn, [item.plan for item in planned])


def _plan(appends: Sequence[_Append]) -> list[_Planned]:
    """Each append's insert, numbered after the ones before it of the same writer; an append
    that cannot be planned fails at once (and so do the later ones of its writer: their
    ``seq``s no longer follow)."""
    planned: list[_Planned] = []
    next_seqs: dict[int, int] = {}
    for append in appends:
        writer = append.writer
        next_seq = next_seqs.get(id(writer), writer.next_seq)
        try:
            plan = writer.plan(append.events, next_seq)
        except PersistenceError as exc:
            append.future.set_exception(exc)
            continue
        next_seqs[id(writer)] = next_seq + len(append.events)
        planned.append(_Planned(append, plan))
    return planned


def outcome_unknown(exc: psycopg.Error) -> bool:
    """True if a statement that raised ``exc`` may have committed all the same: the
    connection broke (no SQLSTATE, class 08) or the server is shutting down (57P), so the
    answer was lost. Any other server error is a known rollback."""
    state = exc.sqlstate
    return state is None or state.startswith(("08", "57P"))


def _fail(append: _Append, cause: BaseException | str) -> None:
    error = PersistenceError.failed(
        f"cannot append to session {append.writer.session_id!r}", cause
    )
    append.writer.failed(error)
    append.future.set_exception(error)


def _fail_all(planned: Sequence[_Planned], exc: Exception, *, unknown: bool) -> None:
    """The transaction failed: nothing of it is acknowledged. If its outcome is ``unknown``
    it may have committed all the same: each writer clears before its next append."""
    for item in planned:
        if unknown:
            item.append.writer.outcome_unknown(item.plan, exc)
        _fail(item.append, exc)
