"""Making new logs durable — their data and their names — before anything durable names them.

With the fsync policy ``turn`` a new log costs no sync when it is made: its file is written
under a hidden name and linked into place (a killed process leaves the whole log or none),
and nobody waits for the disk. Its data and its name are made durable by the first durable
point after its link: every sync that makes a log's content durable first settles every log
linked before it (``NewLogs.settle``) — the data of each not synced yet (through its writer,
or by its path once closed; the caller's own log among them) and then the data directory, one
``fsync`` for every link before it. So no durable point — a parent's turn end whose tool
result names its child, a settlement notice, the child's own turn end — claims a log that
names a new log before the new log is durable (one data directory, one order of links). A
log that no durable point covered yet may be lost, or found empty, after a machine crash, and
so may be a log that names it through writeback nobody asked for; an empty or headerless file
is not a session (``SessionPersistence.list`` skips it; the header cache's file leaves such
logs out). With ``always`` a new log is synced before its link and the directory at once, as
every append there is (docs/reliability.md).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from pathlib import Path
from typing import Protocol

from host.project_files import FileRefused, open_regular
from host.sessions.persistence import PersistenceError

sync_fd = getattr(os, "fdatasync", os.fsync)
log = logging.getLogger(__name__)


class NewLog(Protocol):
    """What ``NewLogs`` asks of an open new log's writer."""

    def sync_new(self) -> bool:
        """Sync the log's data unless a sync of its own already covers it; ``False`` if the
        writer is closed (its file is then synced by its path). A failed sync breaks the
        writer and raises ``PersistenceError``."""
        ...


class NewLogs:
    """The logs linked in one data directory whose data or names may not be durable yet.

    Safe from any thread: ``settle`` blocks (on the sync thread, or at a synchronous durable
    point on the event loop); one settle runs at a time, and a later one waits for it.
    """

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        self._changed = threading.Lock()
        self._settling = threading.Lock()
        self._linked = 0  # links made so far
        self._durable = 0  # links covered by a finished settle
        # new logs (file names) whose data is not known to be durable, and their writers
        self._unsynced: dict[str, NewLog] = {}
        self._given_up: set[str] = set()  # new logs whose sync failed: never known durable

    def linked(self, name: str, writer: NewLog | None = None) -> None:
        """Count the link of the log file ``name`` just made; ``writer``: its writer, if its
        data is not synced yet (``always`` syncs it before the link)."""
        with self._changed:
            self._linked += 1
            if writer is not None:
                self._unsynced[name] = writer

    def reopened(self, name: str, writer: NewLog) -> None:
        """A writer opened again for the log file ``name``: while the log's data is not known
        to be durable, a settle syncs it through this writer (a failure then breaks it)."""
        with self._changed:
            if name in self._unsynced:
                self._unsynced[name] = writer

    def synced(self, name: str, writer: NewLog) -> None:
        """``writer`` synced the log file ``name``: its data is durable."""
        with self._changed:
            if self._unsynced.get(name) is writer:
                del self._unsynced[name]

    def given_up(self, name: str, writer: NewLog) -> None:
        """``writer``'s sync of the log file ``name`` failed: the log is never known durable
        (no settle tries it again; ``pending`` stays true)."""
        with self._changed:
            if self._unsynced.get(name) is writer:
                del self._unsynced[name]
                self._given_up.add(name)

    def pending(self, name: str) -> bool:
        """Whether the log file ``name`` was linked and its data is not known to be durable
        (the header cache's file leaves it out: a machine crash may empty it)."""
        with self._changed:
            return name in self._unsynced or name in self._given_up

    def settle(self, caller: NewLog | None = None) -> None:
        """Return once every log linked before this call has durable data and a durable name:
        the data of each not synced yet (``caller``'s own included, so it may skip its sync),
        then the directory. A failed sync of ``caller``'s log raises ``PersistenceError``;
        another log's is logged and that log given up (its writer refuses every append)."""
        with self._settling:
            with self._changed:
                covers = self._linked
                named = self._durable >= covers
                names = list(self._unsynced)
            for name in names:
                with self._changed:
                    writer = self._unsynced.get(name)  # a writer opened again meanwhile
                try:
                    if writer is not None and not writer.sync_new():
                        self._sync_closed(name, writer)
                except PersistenceError as failed:
                    if writer is caller:
                        raise
                    log.warning("%s: it may not survive a machine crash", failed.message)
            if named:
                return
            with contextlib.suppress(OSError):  # some file systems cannot sync a directory
                dir_fd = os.open(self._directory, os.O_RDONLY)
                try:
                    os.fsync(dir_fd)
                finally:
                    os.close(dir_fd)
            with self._changed:
                self._durable = max(self._durable, covers)

    def _sync_closed(self, name: str, writer: NewLog) -> None:
        """Sync a closed new log's data through a descriptor of its own (a regular file only);
        a log removed since has nothing left to make durable."""
        try:
            fd = open_regular(self._directory / name)
            if fd is not None:
                try:
                    sync_fd(fd)
                finally:
                    os.close(fd)
        except (OSError, FileRefused) as exc:
            self.given_up(name, writer)
            session = os.path.splitext(name)[0]
            raise PersistenceError.failed(f"cannot sync session {session!r}", exc) from exc
        self.synced(name, writer)
