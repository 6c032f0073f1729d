"""The writer of one JSONL session log (see ``host.sessions.jsonl`` for the policy)."""

from __future__ import annotations

import fcntl
import functools
import os
import threading
from collections.abc import Sequence
from typing import Literal

from host.sessions import new_logs, workers
from host.sessions.codec import encode_events
from host.sessions.model import Event
from host.sessions.new_logs import NewLogs
from host.sessions.persistence import PersistenceError, Voice, encode_append

FsyncPolicy = Literal["never", "turn", "always"]
SUFFIX = ".jsonl"


def lock_session(fd: int, session_id: str) -> None:
    """Take the session lock without blocking; on failure close ``fd`` and raise LOCKED."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise PersistenceError.locked(session_id) from None


class JsonlWriter:
    """The writer of one JSONL log; see ``SessionWriter`` for what each method promises.

    A sync may run on the sync thread (``commit_async``) while the event loop appends: it
    records as synced only the size the file had when it began, so what was appended
    meanwhile is synced by the next durable commit. Before syncing it makes the logs linked
    before it durable, their data and their names (``new``: nothing durable may name a log
    that is not). ``close`` waits for the syncs in flight (their descriptor must stay this
    file's).
    """

    def __init__(
        self,
        fd: int,
        session_id: str,
        policy: FsyncPolicy,
        next_seq: int,
        new: NewLogs,
    ) -> None:
        self._fd = fd
        self._session_id = session_id
        self._policy = policy
        self._next_seq = next_seq
        self._new = new
        self._file_name = f"{session_id}{SUFFIX}"
        self._size = os.fstat(fd).st_size
        self._synced = -1  # the size a finished sync began with (-1: none yet)
        self._claimed = -1  # the size a finished durable commit (its settle too) began with
        self._broken: str | None = None
        self._syncs = threading.Condition()
        self._in_flight = 0  # syncs asked of the sync thread and not finished

    @property
    def session_id(self) -> str:
        """The session this writer appends to."""
        return self._session_id

    @property
    def next_seq(self) -> int:
        """The ``seq`` the next appended event must carry."""
        return self._next_seq

    def append(self, events: Sequence[Event]) -> None:
        """Encode all ``events``, check their ``seq``s, write them with one write; see protocol."""
        self._check_usable()
        if not events:
            return
        data = encode_append(self._session_id, self._next_seq, events, encode_events)
        self._write(data)
        self._next_seq += len(events)
        if self._policy == "always":
            self._fsync()

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        written = 0
        try:
            while written < len(data):
                written += os.write(self._fd, view[written:])
        except OSError as exc:
            if written:
                try:
                    os.ftruncate(self._fd, self._size)
                except OSError:
                    self._broken = f"a failed append left a partial line ({exc})"
            raise PersistenceError.failed(
                f"cannot append to session {self._session_id!r}", exc
            ) from exc
        self._size += len(data)

    def commit(self, durable: bool = False) -> None:
        """With ``durable`` and policy ``"turn"``, fdatasync — unless nothing was written since
        this writer's last sync (a settling child checkpoints again after its turn end)."""
        self._check_usable()
        if self._wants_sync(durable):
            self._fsync()

    async def commit_async(self, durable: bool = False) -> None:
        """``commit`` whose sync runs on the sync thread (``host.sessions.workers.sync``): the
        event loop goes on meanwhile, and other sessions' syncs asked for meanwhile run
        after it as one batch.
        Errors as ``commit``'s (a failed sync breaks the writer). A cancelled caller gets its
        ``CancelledError`` once the sync finished, its outcome recorded by the writer."""
        self._check_usable()
        if not self._wants_sync(durable):
            return
        with self._syncs:
            self._in_flight += 1
        await workers.sync(functools.partial(self._fsync, in_flight=True))

    def _wants_sync(self, durable: bool) -> bool:
        return durable and self._policy == "turn" and self._claimed != self._size

    def sync_new(self) -> bool:
        """See ``NewLog.sync_new`` (a settle's, on any thread)."""
        with self._syncs:
            if self._fd < 0:
                return False
            self._in_flight += 1
        self._fsync(in_flight=True, settle=False)
        return True

    def _fsync(self, *, in_flight: bool = False, settle: bool = True) -> None:
        """Settle the logs linked so far (``settle``: a durable commit, recorded as claimed),
        then sync the data up to the present size unless a finished sync began with it, and
        record it as synced; ``in_flight``: a sync counted in flight, uncounted afterwards
        whatever happened (``close`` waits)."""
        size = self._size
        try:
            try:
                if settle:
                    self._new.settle(self)  # this log's own data too, if it is new
                if self._synced < size:
                    new_logs.sync_fd(self._fd)
            except OSError as exc:
                self._broken = f"fsync failed ({exc})"
                self._new.given_up(self._file_name, self)
                raise PersistenceError.failed(
                    f"cannot sync session {self._session_id!r}", exc
                ) from exc
            self._synced = max(self._synced, size)
            if settle:
                self._claimed = max(self._claimed, size)
            self._new.synced(self._file_name, self)
        finally:
            if in_flight:
                with self._syncs:
                    self._in_flight -= 1
                    self._syncs.notify_all()

    def _check_usable(self) -> None:
        if self._fd < 0:
            raise PersistenceError(
                PersistenceError.PERSISTENCE_FAILED,
                f"writer of session {self._session_id!r} is closed",
            )
        if self._broken is not None:
            raise PersistenceError(
                PersistenceError.PERSISTENCE_FAILED,
                f"writer of session {self._session_id!r} is unusable: {self._broken}",
            )

    def voice(self) -> Voice:
        """The right to send messages on behalf of the session (``Voice``). It always holds:
        nobody can take the lock from an open writer, broken or not, so whoever takes the
        session after it took it in order (after its close)."""
        return Voice(self._session_id, _holds)

    def close(self) -> None:
        """Release the lock and the file descriptor, after the syncs in flight; idempotent."""
        with self._syncs:
            while self._in_flight:
                self._syncs.wait()
            fd, self._fd = self._fd, -1  # under the lock: no settle starts a sync on it now
        if fd >= 0:
            os.close(fd)  # closing the only descriptor releases the flock

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _holds() -> bool:
    return True
