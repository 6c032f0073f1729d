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

Syncs (``fdatasync``, a directory's ``fsync``) run on one thread of their own, ``sync``: it
runs, one after another, every sync queued while it was busy, then tells each waiting event
loop once (a group commit: the first sync of a batch commits the file system's journal for
all the others, which then find little left to write). A thread mostly waits for the disk
and must not take the readers' threads; one thread, not a pool, because each hand-off
between threads costs the event loop's thread CPU (the lock every Python thread needs), and
a batch costs about one hand-off for all its syncs. ``settled`` awaits such a call without
giving up on it: a cancelled caller sees its ``CancelledError`` only once the call has
finished.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Protocol, TypeAlias, TypeVar

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


_Job: TypeAlias = tuple[
    Callable[[], None], asyncio.AbstractEventLoop, "asyncio.Future[None]"
]
_Outcome: TypeAlias = tuple["asyncio.Future[None]", BaseException | None]
_syncs: queue.SimpleQueue[_Job] | None = None


async def sync(job: Callable[[], None]) -> None:
    """Run ``job`` (a sync) on the sync thread, started on the first call, and wait for it
    without giving up on it (``settled``); its exception is raised here."""
    global _syncs
    loop = asyncio.get_running_loop()
    future: asyncio.Future[None] = loop.create_future()
    with _lock:
        if _syncs is None:
            _syncs = queue.SimpleQueue()
            name = "agent-host-sync"
            threading.Thread(target=_serve, args=(_syncs,), name=name, daemon=True).start()
        _syncs.put((job, loop, future))
    await settled(future)


def _serve(jobs: queue.SimpleQueue[_Job]) -> None:
    """The sync thread: take every job queued by the time it looks (a batch), run them in
    order, then tell each event loop the outcomes of its jobs with one call."""
    while True:
        batch = [jobs.get()]
        while True:
            try:
                batch.append(jobs.get_nowait())
            except queue.Empty:
                break
        outcomes: dict[asyncio.AbstractEventLoop, list[_Outcome]] = {}
        for job, loop, future in batch:
            error: BaseException | None = None
            try:
                job()
            except BaseException as exc:  # handed to the awaiting caller
                error = exc
            outcomes.setdefault(loop, []).append((future, error))
        for loop, told in outcomes.items():
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
                loop.call_soon_threadsafe(_tell, told)


def _tell(outcomes: list[_Outcome]) -> None:
    for future, error in outcomes:
        if future.done():
            continue
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error)


def _forget_sync_thread() -> None:
    global _syncs
    _syncs = None  # a forked child has no sync thread: the next sync starts one


os.register_at_fork(after_in_child=_forget_sync_thread)


async def settled(future: Future[T] | asyncio.Future[T]) -> T:
    """The result of ``future``; should the caller be cancelled meanwhile (once or more), its
    ``CancelledError`` is raised once ``future`` finished (its outcome left to whoever
    submitted it: a sync's writer records it either way; a new log's descriptor is closed only
    after the thread that syncs it is done with it)."""
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
