"""Making the names of new logs durable: one directory ``fsync`` for every link before it.

A new log is linked into the data directory after its data was synced; its *name* survives a
machine crash once the directory is synced after the link. With the fsync policy ``always``
that happens at once; with ``turn`` it waits for the first durable point that needs it: every
sync that makes a log's content durable first makes every name linked before it durable
(``NameSync.settle``). So nothing that can refer to a new log — a parent's tool result naming
its child, the child's own turn end — is made durable before the log's name is (one data
directory, one order of links: a directory sync covers every link made before it began).
Children created close together share one directory sync, and a ``settle`` that finds one in
flight waits for it rather than start another beside it (docs/reliability.md).
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path


class NameSync:
    """The links made in one data directory and how many of them a directory sync covers.

    Safe from any thread: ``settle`` blocks (a sync on the sync thread, or a synchronous
    durable point on the event loop, as before).
    """

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        self._changed = threading.Condition()
        self._linked = 0  # links made so far
        self._durable = 0  # links covered by a finished directory sync
        self._running = False  # a directory sync is in flight

    def linked(self) -> None:
        """Count a link just made (its name is not durable yet)."""
        with self._changed:
            self._linked += 1

    @property
    def pending(self) -> int:
        """Links whose names are not known to be durable."""
        with self._changed:
            return self._linked - self._durable

    def settle(self) -> None:
        """Return once every name linked before this call is durable: at once when a
        finished directory sync covers them, after the one in flight when it began after
        them, else after a directory sync of its own (which covers every link so far)."""
        with self._changed:
            wanted = self._linked
            while self._durable < wanted and self._running:
                self._changed.wait()
            if self._durable >= wanted:
                return
            self._running, covers = True, self._linked
        synced = False
        try:
            with contextlib.suppress(OSError):  # some file systems cannot sync a directory
                dir_fd = os.open(self._directory, os.O_RDONLY)
                try:
                    os.fsync(dir_fd)
                finally:
                    os.close(dir_fd)
            synced = True
        finally:
            with self._changed:
                self._running = False
                if synced:
                    self._durable = max(self._durable, covers)
                self._changed.notify_all()
