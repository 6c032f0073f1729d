"""The worker threads session persistence runs its blocking calls on, started ahead of need.

``asyncio.to_thread`` uses the event loop's default executor, which starts its first thread
on first use: in a fresh host that start-up (0.3–1.5 ms on the reference machine) lands on
the first resume or large read. Persistence runs its blocking calls here instead, on one
process-wide pool whose first thread ``warm`` starts when a persistence is constructed (at
plugin activation), off every request's path. ``warm`` also runs one-time set-ups there, such
as generating the codec's event decoders (about 30 ms), which the first read would pay.

``resume`` runs a blocking resume that opens a writer: should the awaiting caller be
cancelled while the thread works, the writer is closed once the thread finishes, so a
cancelled resume never leaves the session's lock held.

Syncs (``fdatasync``, a directory's ``fsync``) run on a pool of their own, ``syncing``: a
thread there mostly waits for the disk, and many syncs in flight at once are what lets the
file system write them with one journal commit; they must not take the readers' threads.
``settled`` awaits such a call without giving up on it: a cancelled caller sees its
``CancelledError`` only once the call has finished.
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from host.sessions.persistence import Resumed

T = TypeVar("T")


class Closable(Protocol):
    """What ``opening`` opens: a writer."""

    def close(self) -> None:
        """Release what it holds."""
        ...


W = TypeVar("W", bound=Closable)

_pool: ThreadPoolExecutor | None = None
_sync_pool: ThreadPoolExecutor | None = None
SYNC_THREADS = 16
"""Syncs in flight at once at most: past about 16 the journal commits are not fewer."""
_prepared: set[Callable[[], object]] = set()
_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    """The pool, created (and its first thread started) on the first call."""
    global _pool
    with _lock:
        if _pool is None:
            workers = min(32, (os.cpu_count() or 1) + 4)  # asyncio's default executor size
            _pool = ThreadPoolExecutor(workers, thread_name_prefix="agent-host-persistence")
            _pool.submit(_nothing)  # starts a thread; idle threads are kept for later calls
        return _pool


def syncing() -> ThreadPoolExecutor:
    """The pool that blocking syncs run on (module docstring), created on first use."""
    global _sync_pool
    with _lock:
        if _sync_pool is None:
            _sync_pool = ThreadPoolExecutor(SYNC_THREADS, thread_name_prefix="agent-host-sync")
        return _sync_pool


async def settled(future: Future[T]) -> T:
    """The result of ``future``; should the caller be cancelled meanwhile (once or more), its
    ``CancelledError`` is raised once ``future`` finished (its outcome left to whoever
    submitted it: a sync's writer records it either way; a new log's descriptor is closed only
    after the thread that fills it is done with it)."""
    wrapped = asyncio.wrap_future(future)
    try:
        return await asyncio.shield(wrapped)
    except asyncio.CancelledError:
        while not wrapped.done():
            try:
                await asyncio.wait([wrapped])
            except asyncio.CancelledError:
                continue  # the first cancellation is raised below, after the thread's end
        if not wrapped.cancelled():
            wrapped.exception()  # seen: the caller's cancellation is what it gets
        raise


def warm(*prepare: Callable[[], object]) -> None:
    """Start the pool and its first thread now, and run each ``prepare`` on it once per
    process (a one-time set-up the first request would otherwise pay); returns at once."""
    pool = _executor()
    with _lock:
        fresh = [task for task in prepare if task not in _prepared]
        _prepared.update(fresh)
    for task in fresh:
        pool.submit(task)  # a failure surfaces again where the set-up is really used


def _nothing() -> None:
    return None


async def run(fn: Callable[..., T], *args: object) -> T:
    """``fn(*args)`` on a worker thread; the event loop keeps running meanwhile."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_executor(), functools.partial(fn, *args))


async def resume(fn: Callable[..., Resumed], *args: object) -> Resumed:
    """``fn(*args)`` on a worker thread, where ``fn`` opens a writer; if the caller is
    cancelled before it finishes, the writer it returns is closed (module docstring)."""
    future: Future[Resumed] = _executor().submit(fn, *args)
    try:
        return await asyncio.wrap_future(future)
    except asyncio.CancelledError:
        future.add_done_callback(_close_abandoned)
        raise


async def opening(fn: Callable[[], W]) -> W:
    """``fn()`` on a worker thread, where ``fn`` opens a writer; a cancelled caller gets its
    ``CancelledError`` once ``fn`` finished, the writer it opened closed (``settled``)."""
    future: Future[W] = _executor().submit(fn)
    try:
        return await settled(future)
    except asyncio.CancelledError:
        if not future.cancelled() and future.exception() is None:
            future.result().close()
        raise


def _close_abandoned(future: Future[Resumed]) -> None:
    if not future.cancelled() and future.exception() is None:
        future.result().writer.close()
