"""The worker threads a host runs its synchronous function tools on.

A plain ``def`` tool may block (a file scan, an HTTP client, a subprocess): called on the
event loop it would freeze every other agent's turn, every stream and the terminal client
until it returned. Each host owns one bounded pool (the ``tool_workers`` service; the size of
asyncio's default executor) and a synchronous tool runs there, so the loop keeps serving;
concurrency-safe ones of one batch run side by side. A tool that runs without a host (an agent
built without services) uses the event loop's default executor instead.

A thread cannot be stopped: when the turn is interrupted the call's await ends at once and
the turn goes on to its end, while the thread runs to completion and its late result is
dropped. ``close`` (when the host closes) lets running threads finish without waiting for them.
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

SERVICE = "tool_workers"
"""The name a host registers its pool under."""


class ToolWorkers:
    """A host's bounded pool for synchronous tools, started on first use."""

    def __init__(self, size: int | None = None) -> None:
        self.size = size or min(32, (os.cpu_count() or 1) + 4)
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.size, thread_name_prefix="agent-host-tool")
            return self._pool

    async def run(self, function: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
        """``function(**kwargs)`` on a worker thread; cancelling the await drops the result."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor(), functools.partial(function, **kwargs))

    def close(self) -> None:
        """Stop taking work; calls not started are cancelled, running ones finish unwaited."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


async def run_blocking(ctx: Any, function: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """``function(**kwargs)`` on the pool of the host behind ``ctx`` (the loop's default
    executor when there is none), awaited."""
    find = getattr(ctx, "find", None)
    workers = find(SERVICE) if find is not None else None
    if isinstance(workers, ToolWorkers):
        return await workers.run(function, kwargs)
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, functools.partial(function, **kwargs))
