"""The header cache behind ``JsonlPersistence.list()``: unchanged files are not read again.

``list()`` keeps, from its last run, each file's stat key and header, and the data directory's
(device, inode, mtime, ctime) when it can be trusted. A hit is served without opening the file,
and it cannot be a stale header:

* a stored header never changes: a log is created complete (a finished temporary file is
  hard-linked into place) and afterwards only appended to, or truncated after its header by
  ``load()``;
* a file deleted and recreated under the same name is a new inode. Should the file system reuse
  the inode number, the unlink and the link changed the directory, so the inode alone is trusted
  only while the directory's timestamps are unchanged; otherwise the key is (inode, ctime, size)
  from a stat, and the link that created the new file gave it a newer ctime. Timestamps are
  coarse (a few ms), so only files and a directory whose ctime/mtime lie more than
  ``TIMESTAMP_SLACK_NS`` before the list began are cached or trusted: a change after that list
  then necessarily carries a later timestamp (a file being appended to is simply read again);
* the stat comes before the header is read, so a file replaced in between is cached under its
  old key and read again next time. Unreadable files are re-checked by stat every time, and read
  again once they change.
"""

from __future__ import annotations

import operator
import os
import time
from collections.abc import Callable
from pathlib import Path

from host.cancel import CancelSignal, raise_if_cancelled
from host.sessions.jsonl_writer import SUFFIX
from host.sessions.model import SESSION_ID_PATTERN, SessionHeader
from host.sessions.persistence import PersistenceError

CachedHeader = tuple[tuple[int, int, int], SessionHeader | None]
ReadHeader = Callable[[str], SessionHeader | None]

TIMESTAMP_SLACK_NS = 100_000_000
"""File and directory timestamps this much older than a list are settled (ticks are ≤ 10 ms)."""

_creation_order = operator.attrgetter("created_at", "id")  # = SessionHeader.sort_key, in C


class HeaderCache:
    """The headers of the session files of one directory, re-read only when a file changed."""

    def __init__(self) -> None:
        self._files: dict[str, CachedHeader] = {}
        self._dir_key: tuple[int, int, int, int] | None = None
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
        dir_key = (dir_stat.st_dev, dir_stat.st_ino, dir_stat.st_mtime_ns, dir_stat.st_ctime_ns)
        # Unchanged directory: nothing was added, removed or renamed since the last list, so an
        # entry whose inode is unchanged is the file read before; no per-file stat is needed.
        unchanged = dir_key == self._dir_key
        seen: dict[str, CachedHeader] = {}
        headers: list[SessionHeader] = []
        hits = 0
        for index, entry in enumerate(entries):
            if not index & 255:
                raise_if_cancelled(signal, PersistenceError)
            header, hit = self._header(entry, unchanged, before, read_header, seen)
            hits += hit
            if header is not None:
                headers.append(header)
        if hits == len(entries) == len(self._files) and self._sorted is not None:
            headers = self._sorted.copy()  # the same files, every one a hit: already sorted
        else:
            headers.sort(key=_creation_order)
        self._files = seen  # replaced, not updated: entries of deleted files go
        self._sorted = headers.copy()
        # Trust the directory's timestamps next time only if they are older than a timestamp
        # tick: a change in the same (coarse) tick as our stat could leave them unchanged.
        settled = before - max(dir_stat.st_mtime_ns, dir_stat.st_ctime_ns) > TIMESTAMP_SLACK_NS
        self._dir_key = dir_key if settled else None
        return headers

    def _header(
        self,
        entry: os.DirEntry[str],
        unchanged: bool,
        before: int,
        read_header: ReadHeader,
        seen: dict[str, CachedHeader],
    ) -> tuple[SessionHeader | None, bool]:
        """One entry's header, and whether the cache answered without a stat."""
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
            return cached[1], True
        if SESSION_ID_PATTERN.fullmatch(name[: -len(SUFFIX)]) is None:
            return None, False
        try:
            st = entry.stat()  # before the read: a file replaced in between is re-read
        except OSError:
            return None, False
        key = (st.st_ino, st.st_ctime_ns, st.st_size)
        header = cached[1] if cached is not None and cached[0] == key else read_header(name)
        if before - st.st_ctime_ns > TIMESTAMP_SLACK_NS:  # else not cached: see the docstring
            seen[name] = (key, header)
        return header, False
