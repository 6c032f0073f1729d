"""The worker threads a host runs its synchronous function tools on.

A plain ``def`` tool may block (a file scan, an HTTP client, a subprocess): called on the
event loop it would freeze every other agent's turn, every stream and the terminal client
until it returned. Each host owns one bounded pool (the ``tool_workers`` service, ``SIZE``
threads at most, started one by one as calls need them) and a synchronous tool runs there, so
the loop keeps serving; concurrency-safe ones of one batch run side by side. A tool that runs
without a host (an agent built without services) uses one process-wide pool of the same kind.

A thread cannot be stopped: when the turn is interrupted the call's await ends at once and
the turn goes on to its end, while the thread runs to completion and its late result is
dropped. The threads are daemon threads, so a call still running never holds the process
open: ``close`` (when the host closes) refuses new work for good, cancels the calls not
started, and abandons the running ones (their count is logged), and the process exits when
its main thread does. ``concurrent.futures.ThreadPoolExecutor`` would join every one of its
threads at interpreter exit, so a tool sleeping forever would hang ``agent-host`` on exit.
"""

from __future__ import annotations

import asyncio
import logging
import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from host.services import Lookup

log = logging.getLogger(__name__)

SERVICE = "tool_workers"
"""The name a host registers its pool under."""
SIZE = min(32, (os.cpu_count() or 1) + 4)
"""Threads a pool runs at most (the size of asyncio's default executor): further calls wait
for a free thread."""

_Job = tuple[Future[Any], Callable[..., Any], dict[str, Any]]


class ToolWorkers:
    """A bounded pool of daemon threads for synchronous tools, started as calls need them."""

    def __init__(self, size: int | None = None) -> None:
        self.size = size or SIZE
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._in_flight = 0  # calls queued or running
        self._closed = False
        self._lock = threading.Lock()

    def submit(self, function: Callable[..., Any], kwargs: dict[str, Any]) -> Future[Any]:
        """Queue ``function(**kwargs)``; ``RuntimeError`` once the pool is closed."""
        future: Future[Any] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("the host's tool workers are closed")
            self._in_flight += 1
            self._jobs.put((future, function, kwargs))
            if self._in_flight > len(self._threads) and len(self._threads) < self.size:
                thread = threading.Thread(
                    target=self._work, name=f"agent-host-tool-{len(self._threads)}", daemon=True
                )
                self._threads.append(thread)
                thread.start()
        return future

    async def run(self, function: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
        """``function(**kwargs)`` on a worker thread; cancelling the await drops the result."""
        return await asyncio.wrap_future(self.submit(function, kwargs))

    def close(self) -> int:
        """Refuse new work for good, cancel the calls not started; returns how many running
        calls were abandoned (their threads finish unwaited, never holding the process)."""
        with self._lock:
            if self._closed:
                return 0
            self._closed = True
            while True:
                try:
                    job = self._jobs.get_nowait()
                except queue.Empty:
                    break
                if job is not None:
                    job[0].cancel()
                    self._in_flight -= 1
            for _ in self._threads:
                self._jobs.put(None)  # an idle thread ends on it
            abandoned = self._in_flight
        if abandoned:
            log.info("%d tool call(s) still running were abandoned", abandoned)
        return abandoned

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            future, function, kwargs = job
            if future.set_running_or_notify_cancel():
                try:
                    result = function(**kwargs)
                except BaseException as error:  # the awaiting task gets it, as from an executor
                    future.set_exception(error)
                else:
                    future.set_result(result)
            with self._lock:
                self._in_flight -= 1


_fallback = ToolWorkers()
"""The pool of tools run without a host (never closed: its daemon threads hold nothing)."""


async def run_blocking(
    ctx: Lookup | None, function: Callable[..., Any], kwargs: dict[str, Any]
) -> Any:
    """``function(**kwargs)`` on the pool of the host behind ``ctx`` (the process-wide one
    when there is none), awaited."""
    workers = ctx.find(SERVICE) if ctx is not None else None
    pool = workers if isinstance(workers, ToolWorkers) else _fallback
    return await pool.run(function, kwargs)
