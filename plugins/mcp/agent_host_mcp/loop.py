"""One background thread running the asyncio event loop every MCP connection lives on.

The host activates plugins synchronously and the CLI runs several event loops over a host's
life, while the SDK's transports are anyio task groups that must be entered and left in one
task. So each connection is one long task on this loop, and callers reach it from any thread
or event loop through ``submit``.

The loop is a ``process.ServerLoop``: every server it spawns gets a parent-death signal, and
the loop's thread, which spawns them, lives as long as they may (``close`` stops them first).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from agent_host_mcp.process import ServerLoop

T = TypeVar("T")


class McpLoop:
    """A lazily started event loop on a daemon thread; ``close`` stops it and joins the thread.

    After ``close`` a later ``start`` (or ``submit``) starts a fresh loop.
    """

    def __init__(self, name: str = "agent-host-mcp") -> None:
        self._name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._roots: set[asyncio.Task[Any]] = set()  # touched on the loop thread only

    @property
    def running(self) -> bool:
        """True between ``start`` and ``close``."""
        return self._loop is not None

    def start(self) -> asyncio.AbstractEventLoop:
        """Start the thread if it is not running; return its loop."""
        with self._lock:
            if self._loop is not None:
                return self._loop
            loop = ServerLoop()
            started = threading.Event()

            def serve() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(started.set)
                loop.run_forever()

            thread = threading.Thread(target=serve, name=self._name, daemon=True)
            thread.start()
            started.wait()
            self._loop, self._thread = loop, thread
            return loop

    def in_loop(self) -> bool:
        """True when called on the loop's own thread."""
        return self._thread is not None and threading.current_thread() is self._thread

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the loop; cancelling the future cancels the task."""
        return asyncio.run_coroutine_threadsafe(self._tracked(coro), self.start())

    async def _tracked(self, coro: Coroutine[Any, Any, T]) -> T:
        task = asyncio.current_task()
        assert task is not None
        self._roots.add(task)
        try:
            return await coro
        finally:
            self._roots.discard(task)

    def call_soon(self, callback: Callable[[], object]) -> None:
        """Run ``callback`` on the loop thread (thread-safe)."""
        self.start().call_soon_threadsafe(callback)

    def close(self, timeout: float = 10.0) -> None:
        """Cancel what still runs on the loop (bounded by ``timeout``), stop it, join the thread.

        Idempotent. Close connections first: a cancelled connection still stops its server,
        but only within this bound.
        """
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop, self._thread = None, None
        if loop is None or thread is None:
            return
        if threading.current_thread() is thread:
            raise RuntimeError("McpLoop.close called on the MCP loop thread")

        async def shutdown() -> None:
            # Submitted tasks first, and only them: a connection cancelled at its root leaves
            # its transport the graceful way, while cancelling the transport's own child tasks
            # would cancel that teardown too.
            deadline = loop.time() + timeout
            roots = list(self._roots)
            for task in roots:
                task.cancel()
            if roots:
                await asyncio.wait(roots, timeout=timeout)
            current = asyncio.current_task()
            rest = [task for task in asyncio.all_tasks() if task is not current]
            for task in rest:
                task.cancel()
            if rest:
                await asyncio.wait(rest, timeout=max(0.1, deadline - loop.time()))
            await loop.shutdown_asyncgens()

        stopped = (concurrent.futures.TimeoutError, concurrent.futures.CancelledError)
        with contextlib.suppress(*stopped):
            asyncio.run_coroutine_threadsafe(shutdown(), loop).result(timeout + 1.0)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        if not thread.is_alive():
            loop.close()
