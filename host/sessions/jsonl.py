"""The embedded persistence: one JSON Lines file per session, ``<data_dir>/<id>.jsonl``.

Durability policy (``fsync``):

* An append is **acknowledged** when ``SessionWriter.append`` returns: its lines were handed to
  the kernel with one ``os.write`` (no user-space buffer), so they survive a killed process.
* ``"turn"`` (default): ``commit(durable=True)`` — which the agent calls at every turn end —
  ``fdatasync``s the file, so completed turns survive a machine crash (a durable commit with
  nothing written since the last sync does not sync again; docs/reliability.md lists a child's
  durable points). ``commit_async`` does it on the sync thread (``host.sessions.workers``),
  which runs the syncs asked for meanwhile as one batch: fewer journal commits.
* ``"always"``: every append is ``fdatasync``ed before it returns.
* ``"never"``: the OS decides when data reaches the disk.
Session creation writes the header and initial events to a hidden temporary file in
``data_dir`` and hard-links it into place, so a killed process leaves a whole log or none. With
``"always"`` the file is synced before the link (``create_async``: on the sync thread) and the
directory after it. With ``"turn"`` nothing waits for the disk at creation: the new log's data
and name are made durable before the first durable point that could name it, one directory
sync for every link before it (``host.sessions.new_logs``).

Locking: a writer holds ``flock(LOCK_EX)`` on the log file for its lifetime (taken without
blocking: a holder in any process, including this one, makes it ``LOCKED``). ``resume`` takes
it once, cuts a torn tail off under it and keeps it for the writer it returns; ``inspect`` and
``list`` never lock, ``inspect`` never writes, and ``list`` writes nothing but its derived
header cache, ``.index/headers`` (``host.sessions.header_cache``).
Nothing is ever written outside ``data_dir``; hostile ids are refused first. Logs larger than
``INLINE_READ_BYTES`` are read on ``host.sessions.workers`` threads.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import attrs

from host.cancel import CancelSignal, raise_if_cancelled
from host.project_files import FileRefused, open_regular
from host.sessions import header_cache_file, new_logs, workers
from host.sessions.codec import (
    CodecError,
    decode_event,
    encode_events,
    encode_header,
    prepare_decoding,
)
from host.sessions.header_cache import HeaderCache
from host.sessions.jsonl_writer import (
    SUFFIX,
    FsyncPolicy,
    JsonlWriter,
    lock_session,
)
from host.sessions.logfile import (
    ParsedLog,
    parse_header_line,
    parse_log,
    read_head,
    read_last_line,
)
from host.sessions.model import (
    SESSION_ID_PATTERN,
    Event,
    SessionHeader,
    new_id,
    validate_session_id,
)
from host.sessions.new_logs import NewLogs
from host.sessions.persistence import PersistenceError, Resumed, StoredSession

__all__ = ["SUFFIX", "FsyncPolicy", "JsonlPersistence", "JsonlStored", "JsonlWriter"]


@attrs.frozen
class JsonlStored(StoredSession):
    """A JSONL log as read: the ``StoredSession`` and the byte counts of its file.

    ``valid_bytes`` is the size of the valid prefix (header line included), ``ignored_bytes``
    what follows it (a torn or garbage tail that ``inspect`` ignored; 0 after a ``resume``),
    ``repaired_bytes`` the torn tail ``resume`` cut off.
    """

    valid_bytes: int = 0
    ignored_bytes: int = 0
    repaired_bytes: int = 0


class JsonlPersistence:
    """``SessionPersistence`` over one JSONL file per session (module docstring: policy)."""

    def __init__(self, data_dir: Path, *, fsync: FsyncPolicy = "turn") -> None:
        if fsync not in ("never", "turn", "always"):
            raise ValueError(f"fsync policy must be never, turn or always, not {fsync!r}")
        self.data_dir = Path(data_dir)
        self._dir_name = os.fspath(self.data_dir)
        self.fsync: FsyncPolicy = fsync
        self._new = NewLogs(self.data_dir)
        self._headers = HeaderCache(
            self.data_dir / header_cache_file.CACHE_PATH, not_durable=self._new.pending
        )
        workers.warm(prepare_decoding)

    def path_for(self, session_id: str) -> Path:
        """The log file of ``session_id`` (validated first: ``SessionIdError``)."""
        return self.data_dir / f"{validate_session_id(session_id)}{SUFFIX}"

    def open_writer(
        self, header: SessionHeader, *, create: bool, events: Sequence[Event] = ()
    ) -> JsonlWriter:
        """See ``SessionPersistence.open_writer``."""
        path = self.path_for(header.id)
        if create:
            return self._create(path, header, events)
        if events:
            raise ValueError("initial events are only written with create=True")
        return self._reopen(path, header)

    async def create_async(
        self, header: SessionHeader, events: Sequence[Event] = ()
    ) -> JsonlWriter:
        """``open_writer(header, create=True, events=events)`` from the event loop
        (``CreatingPersistence.create_async``). Only with ``"always"`` is there a sync to wait
        for (the new file's data, before its link): it runs on the sync thread, and a caller
        cancelled meanwhile gets its ``CancelledError`` once it finished, nothing stored (not
        linked). With ``"turn"`` the new log is made durable by the first durable point that
        needs it (``host.sessions.new_logs``), with ``"never"`` by the OS."""
        path = self.path_for(header.id)
        with self._new_file(path, header, events) as (fd, tmp):
            if self.fsync == "always":
                await workers.sync(functools.partial(self._sync_new, fd, path))
            return self._link(fd, tmp, path, len(events))

    def _create(self, path: Path, header: SessionHeader, events: Sequence[Event]) -> JsonlWriter:
        with self._new_file(path, header, events) as (fd, tmp):
            if self.fsync == "always":
                self._sync_new(fd, path)
            return self._link(fd, tmp, path, len(events))

    @contextmanager
    def _new_file(
        self, path: Path, header: SessionHeader, events: Sequence[Event]
    ) -> Iterator[tuple[int, Path]]:
        """The new log's descriptor and hidden temporary file, locked and filled with the
        header and ``events`` (not synced); the descriptor is closed if the block fails, the
        temporary file removed either way."""
        try:
            data = encode_header(header) + encode_events(events)
        except Exception as exc:
            raise PersistenceError.failed(f"cannot encode session {header.id!r}", exc) from exc
        failed = f"cannot create session {header.id!r}"
        if any(event.seq != index for index, event in enumerate(events)):
            raise PersistenceError.failed(failed, ValueError("bad seq"))
        if path.exists():
            raise self._exists(header.id)
        tmp = self.data_dir / f".{header.id}.{new_id()}.tmp"
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(tmp, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o644)
        except OSError as exc:
            raise PersistenceError.failed(failed, exc) from exc
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a fresh inode: cannot be held
                view, written = memoryview(data), 0
                while written < len(data):
                    written += os.write(fd, view[written:])
            except OSError as exc:
                raise PersistenceError.failed(failed, exc) from exc
            yield fd, tmp
        except BaseException:
            os.close(fd)
            raise
        finally:
            tmp.unlink(missing_ok=True)

    @staticmethod
    def _sync_new(fd: int, path: Path) -> None:
        """Sync a new log's data (before its link: a log that is linked into place always has
        its header)."""
        try:
            new_logs.sync_fd(fd)
        except OSError as exc:
            raise PersistenceError.failed(f"cannot create session {path.stem!r}", exc) from exc

    def _link(self, fd: int, tmp: Path, path: Path, events: int) -> JsonlWriter:
        """Link the filled file into place and return its writer. With ``always`` its data was
        synced and its name is made durable at once; with ``turn`` both wait for the first
        durable point that could name the log (``host.sessions.new_logs``)."""
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise self._exists(path.stem) from None
        except OSError as exc:
            raise PersistenceError.failed(f"cannot create session {path.stem!r}", exc) from exc
        writer = JsonlWriter(fd, path.stem, self.fsync, events, self._new)
        if self.fsync == "turn":
            self._new.linked(path.name, writer)
        elif self.fsync == "always":
            self._new.linked(path.name)
            self._new.settle()
        return writer

    @staticmethod
    def _exists(session_id: str) -> PersistenceError:
        return PersistenceError.already_stored(session_id)

    def _open(self, path: Path, flags: int) -> int:
        """The log at ``path``, only if it is a regular file (``host.project_files``: the data
        directory may lie in a project, and a FIFO or a device there must not hang or flood)."""
        try:
            fd = open_regular(path, flags)
        except FileRefused as refused:
            raise PersistenceError.failed(f"cannot open session {path.stem!r}", refused) from None
        if fd is None:
            raise PersistenceError.not_found(path.stem)
        return fd

    def _reopen(self, path: Path, header: SessionHeader) -> JsonlWriter:
        fd = self._open(path, os.O_RDWR | os.O_APPEND)
        lock_session(fd, header.id)
        try:
            next_seq = self._check_reopen(fd, header)
        except BaseException:
            os.close(fd)
            raise
        writer = JsonlWriter(fd, header.id, self.fsync, next_seq, self._new)
        self._new.reopened(path.name, writer)
        return writer

    def _check_reopen(self, fd: int, header: SessionHeader) -> int:
        """Verify the stored header and the clean tail; return the next ``seq``."""
        try:
            stored, header_len = parse_header_line(read_head(fd))
        except CodecError as exc:
            raise PersistenceError.corrupt(header.id, str(exc)) from None
        if stored != header:
            raise PersistenceError.corrupt(
                header.id, "stored header differs from the writer's header"
            )
        size = os.fstat(fd).st_size
        if os.pread(fd, 1, size - 1) != b"\n":
            raise PersistenceError.corrupt(header.id, "log has a torn tail; load() it first")
        if size == header_len:
            return 0
        try:
            return decode_event(read_last_line(fd, size)).seq + 1
        except CodecError as exc:
            raise PersistenceError.corrupt(
                header.id, f"last line is damaged; load() it first ({exc})"
            ) from None

    async def inspect(
        self, session_id: str, *, signal: CancelSignal | None = None
    ) -> JsonlStored:
        """See ``SessionPersistence.inspect``: read-only, the valid prefix."""
        path = self.path_for(session_id)
        raise_if_cancelled(signal, PersistenceError)
        if _is_small(path):
            parsed = self._read_parsed(path)
        else:
            parsed = await workers.run(self._read_parsed, path)
        raise_if_cancelled(signal, PersistenceError)
        return _stored(parsed)

    def _read_parsed(self, path: Path) -> ParsedLog:
        fd = self._open(path, os.O_RDONLY)
        try:
            return self._parse_fd(fd, path.stem)
        finally:
            os.close(fd)

    def _parse_fd(self, fd: int, session_id: str) -> ParsedLog:
        try:
            data = _read_all(fd)
        except OSError as exc:
            raise PersistenceError.failed(f"cannot read session {session_id!r}", exc) from exc
        try:
            parsed = parse_log(data)
        except CodecError as exc:
            raise PersistenceError.corrupt(session_id, str(exc)) from None
        if parsed.header.id != session_id:
            raise PersistenceError.corrupt(session_id, f"header names session {parsed.header.id!r}")
        return parsed

    async def resume(self, session_id: str, *, signal: CancelSignal | None = None) -> Resumed:
        """See ``SessionPersistence.resume``: a torn tail is cut off under the lock, which the
        writer keeps."""
        path = self.path_for(session_id)
        raise_if_cancelled(signal, PersistenceError)
        if _is_small(path):
            return self._resume_sync(path, signal)
        return await workers.resume(self._resume_sync, path, signal)

    def _resume_sync(self, path: Path, signal: CancelSignal | None) -> Resumed:
        fd = self._open(path, os.O_RDWR | os.O_APPEND)
        lock_session(fd, path.stem)
        try:
            parsed = self._parse_fd(fd, path.stem)
            damage = _damage(parsed)
            if damage is not None:
                raise PersistenceError.corrupt(path.stem, damage)
            raise_if_cancelled(signal, PersistenceError)
            stored = self._repair(fd, parsed)
        except BaseException:
            os.close(fd)
            raise
        writer = JsonlWriter(fd, path.stem, self.fsync, len(stored.events), self._new)
        self._new.reopened(path.name, writer)
        return Resumed(stored, writer)

    def _repair(self, fd: int, parsed: ParsedLog) -> JsonlStored:
        """Cut a torn tail off, durably (an open turn is left to the runtime:
        ``host.sessions.loading``)."""
        if parsed.ignored_bytes:
            try:
                os.ftruncate(fd, parsed.valid_bytes)
                self._new.settle()
                new_logs.sync_fd(fd)
            except OSError as exc:
                raise PersistenceError.failed(
                    f"cannot repair session {parsed.header.id!r}", exc
                ) from exc
        return JsonlStored(
            parsed.header,
            tuple(parsed.events),
            valid_bytes=parsed.valid_bytes,
            repaired_bytes=parsed.ignored_bytes,
        )

    def _list_sync(self, signal: CancelSignal | None) -> list[SessionHeader]:
        return self._headers.list(self.data_dir, self._read_header, signal)

    def _read_header(self, name: str) -> tuple[SessionHeader, bytes] | None:
        """See ``header_cache.ReadHeader``: the header of log file ``name`` and its line."""
        stem = name[: -len(SUFFIX)]
        if SESSION_ID_PATTERN.fullmatch(stem) is None:
            return None
        # No Path per file. The caller skipped what was no regular file at its stat; the open
        # follows no link (one swapped in since is opened, and refused, by host.project_files),
        # and O_NONBLOCK: a FIFO swapped in fails to read, not blocks.
        path = os.path.join(self._dir_name, name)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
        except OSError as error:
            if error.errno != errno.ELOOP:
                raise
            fd = self._open_link(path)
        try:
            head = read_head(fd)
        finally:
            os.close(fd)
        try:
            header, length = parse_header_line(head)
        except CodecError:
            return None
        return (header, head[: length - 1]) if header.id == stem else None

    @staticmethod
    def _open_link(path: str) -> int:
        """The log a link at ``path`` leads to, only if it is a regular file (else ``OSError``:
        the listing skips it)."""
        try:
            fd = open_regular(path)
        except FileRefused as refused:
            raise OSError(errno.EINVAL, refused.reason) from None
        if fd is None:
            raise FileNotFoundError(errno.ENOENT, "a dangling link", path)
        return fd

    async def list(self, *, signal: CancelSignal | None = None) -> list[SessionHeader]:
        """See ``SessionPersistence.list``: headers only; unreadable entries are skipped."""
        raise_if_cancelled(signal, PersistenceError)
        headers = await workers.run(self._list_sync, signal)
        raise_if_cancelled(signal, PersistenceError)
        return headers


INLINE_READ_BYTES = 32 * 1024
"""Logs up to this size are parsed on the event loop (well under a millisecond): a thread
hand-off would cost more than the read. Larger logs are read in a worker thread."""


def _is_small(path: Path) -> bool:
    try:
        return os.stat(path).st_size <= INLINE_READ_BYTES
    except OSError:
        return False  # the worker reports it (NOT_FOUND, PERSISTENCE_FAILED)


def _read_all(fd: int) -> bytes:
    size = os.fstat(fd).st_size
    chunks: list[bytes] = []
    offset = 0
    while True:
        chunk = os.pread(fd, max(size - offset, 1 << 16), offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)


def _stored(parsed: ParsedLog) -> JsonlStored:
    return JsonlStored(
        parsed.header,
        tuple(parsed.events),
        damage=_damage(parsed),
        valid_bytes=parsed.valid_bytes,
        ignored_bytes=parsed.ignored_bytes,
    )


def _damage(parsed: ParsedLog) -> str | None:
    """``StoredSession.damage`` of a parsed log."""
    if not parsed.damaged_middle:
        return None
    return f"damaged line at byte {parsed.valid_bytes} is followed by valid events"
