"""The header cache behind ``JsonlPersistence.list()``: unchanged files are not read again.

``list()`` keeps, from its last run, each file's stat key and header, and the data directory's
(device, inode, mtime, ctime) when it can be trusted. A hit is served without opening the file,
and it cannot be a stale header:

* a stored header never changes: a log is created complete (a finished temporary file is
  hard-linked into place) and afterwards only appended to, or truncated after its header by
  ``load()``. A machine crash may empty a new log that no durable point synced yet
  (``host.sessions.new_logs``), so such a log is left out of the ``file``;
* a file deleted and recreated under the same name is a new inode. Should the file system reuse
  the inode number, the unlink and the link changed the directory, so the inode alone is trusted
  only while the directory's timestamps are unchanged; otherwise the key is (inode, ctime, size)
  from a stat, and the link that created the new file gave it a newer ctime. Timestamps are
  coarse (a few ms), so only files and a directory whose ctime/mtime lie more than
  ``TIMESTAMP_SLACK_NS`` before the list began are cached or trusted: a change after that list
  then necessarily carries a later timestamp (a file being appended to is simply read again);
* the stat comes before the header is read, so a file replaced in between is cached under its
  old key and read again next time. Files that are no session log are re-checked by stat every
  time, and read again once they change; a file that cannot be read is not cached at all, and
  one that is no regular file (a device, a FIFO: the data directory may lie in a cloned
  repository) is never opened.

Given a ``file``, the cache also outlives the process: the first list of a new one starts from
what the last list of any process wrote there (``host.sessions.header_cache_file``), checked by
the same rules, which hold across processes (they rest only on the file system's inodes and
timestamps); a list that learned something replaces the file.
"""

from __future__ import annotations

import operator
import os
import time
from collections.abc import Callable
from pathlib import Path
from stat import S_ISREG

from host.cancel import CancelSignal, raise_if_cancelled
from host.sessions import header_cache_file
from host.sessions.header_cache_file import Cached, DirKey
from host.sessions.jsonl_writer import SUFFIX
from host.sessions.model import SESSION_ID_PATTERN, SessionHeader
from host.sessions.persistence import PersistenceError

ReadHeader = Callable[[str], tuple[SessionHeader, bytes] | None]
"""Reads the named file's header and header line (no newline): ``None`` if the file is no
session log, ``OSError`` if it cannot be read."""

TIMESTAMP_SLACK_NS = 100_000_000
"""File and directory timestamps this much older than a list are settled (ticks are ≤ 10 ms)."""

_creation_order = operator.attrgetter("created_at", "id")  # = SessionHeader.sort_key, in C

_READ, _KEPT, _HIT = 0, 1, 2
"""How an entry was answered: read from its file; kept after a stat; kept without one."""


class HeaderCache:
    """The headers of the session files of one directory, re-read only when a file changed;
    kept in ``file`` too, when given, for the next process (module docstring) — but for the
    logs ``not_durable`` names (new logs no durable point has synced yet)."""

    def __init__(self, file: Path | None, *, not_durable: Callable[[str], bool]) -> None:
        self._file = file
        self._not_durable = not_durable
        self._loaded = file is None
        self._files: dict[str, Cached] = {}
        self._dir_key: DirKey | None = None
        self._sorted: list[SessionHeader] | None = None

    def list(
        self, data_dir: Path, read_header: ReadHeader, signal: CancelSignal | None
    ) -> list[SessionHeader]:
        """Every readable header in ``data_dir``, sorted by (created_at, id)."""
        try:
            before = time.time_ns()
            dir_stat = os.stat(data_dir)
            with os.scandir(data_dir) as scan:
                entries = [e for e in scan if e.name.endswith(SUFFIX)]
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise PersistenceError.failed(f"cannot list {data_dir}", exc) from exc
        if self._file is not None and not self._loaded:
            self._loaded = True
            self._dir_key, self._files = header_cache_file.load(self._file, len(entries))
        dir_key = (dir_stat.st_dev, dir_stat.st_ino, dir_stat.st_mtime_ns, dir_stat.st_ctime_ns)
        # Unchanged directory: nothing was added, removed or renamed since the last list, so an
        # entry whose inode is unchanged is the file read before; no per-file stat is needed.
        unchanged = dir_key == self._dir_key
        seen: dict[str, Cached] = {}
        headers: list[SessionHeader] = []
        answers = [0, 0, 0]  # by _READ, _KEPT, _HIT
        for index, entry in enumerate(entries):
            if not index & 255:
                raise_if_cancelled(signal, PersistenceError)
            header, how = self._header(entry, unchanged, before, read_header, seen)
            answers[how] += 1
            if header is not None:
                headers.append(header)
        if answers[_HIT] == len(entries) == len(self._files) and self._sorted is not None:
            headers = self._sorted.copy()  # the same files, every one a hit: already sorted
        else:
            headers.sort(key=_creation_order)
        # Trust the directory's timestamps next time only if they are older than a timestamp
        # tick: a change in the same (coarse) tick as our stat could leave them unchanged.
        settled = before - max(dir_stat.st_mtime_ns, dir_stat.st_ctime_ns) > TIMESTAMP_SLACK_NS
        self._remember(seen, dir_key if settled else None, answers[_KEPT] + answers[_HIT])
        self._sorted = headers.copy()
        return headers

    def _remember(self, seen: dict[str, Cached], dir_key: DirKey | None, kept: int) -> None:
        """Make ``seen`` the cache (entries of deleted files go) and write it to the file if
        it tells a new process more: a header just read, or a newly trusted directory key.
        (Entries of deleted files left in the file are never served: nothing lists them.)"""
        learned = kept < len(seen) or dir_key not in (None, self._dir_key)
        self._files = seen
        self._dir_key = dir_key
        if learned and seen and self._file is not None:  # no file for an empty directory
            # a log not durable yet is left out: a machine crash may yet empty it
            saved = {name: kept for name, kept in seen.items() if not self._not_durable(name)}
            header_cache_file.save(self._file, dir_key, saved)

    def _header(
        self,
        entry: os.DirEntry[str],
        unchanged: bool,
        before: int,
        read_header: ReadHeader,
        seen: dict[str, Cached],
    ) -> tuple[SessionHeader | None, int]:
        """One entry's header, and how it was answered (``_READ``, ``_KEPT`` or ``_HIT``)."""
        name = entry.name
        cached = self._files.get(name)
        if (
            unchanged
            and cached is not None
            and cached[1] is not None
            and cached[0][0] == entry.inode()
            and not entry.is_symlink()  # its target may change without the directory
        ):
            seen[name] = cached
            return cached[1], _HIT
        if SESSION_ID_PATTERN.fullmatch(name[: -len(SUFFIX)]) is None:
            return None, _READ
        try:
            st = entry.stat()  # before the read: a file replaced in between is re-read
        except OSError:
            return None, _READ
        if not S_ISREG(st.st_mode):  # a device or FIFO is never opened: unreadable, skipped
            return None, _READ
        key = (st.st_ino, st.st_ctime_ns, st.st_size)
        if cached is not None and cached[0] == key:
            seen[name] = cached
            return cached[1], _KEPT
        try:
            read = read_header(name)
        except OSError:
            return None, _READ  # not cached: tried again next time
        fresh: Cached = (key, None, b"") if read is None else (key, *read)
        if before - st.st_ctime_ns > TIMESTAMP_SLACK_NS:  # else not cached: see the docstring
            seen[name] = fresh
        return fresh[1], _READ
