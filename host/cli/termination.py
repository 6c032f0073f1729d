"""SIGTERM closes a command the way Ctrl-C does.

``kill``, ``docker stop`` and systemd ask a program to stop with SIGTERM. While ``main`` runs,
SIGTERM is handled like Ctrl-C outside the terminal client: during a command's event loop
(``run``, below) it cancels the command's main task, so the command closes as after Ctrl-C
(turns end ``interrupted``, sessions flush, MCP servers are asked to stop), and ``Terminated``
is raised once it has; at any other moment ``Terminated`` is raised at once, as Ctrl-C raises
``KeyboardInterrupt``. ``main`` then says ``agent-host: terminated`` and exits 143 (128 +
SIGTERM). A SIGTERM that comes while a termination is already under way is ignored: the close
goes on (SIGKILL ends the process without one).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Callable, Coroutine, Iterator
from types import FrameType
from typing import Any, TypeVar, cast

T = TypeVar("T")

TERMINATED = 143
"""The exit code after SIGTERM (128 + 15), as shells report a program that signal ended."""


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived. A ``KeyboardInterrupt``, so everything that lets Ctrl-C through (and
    closes on the way out) does the same for it."""


class _State:
    """Where a SIGTERM goes now: the running command's cancel, or nowhere yet."""

    def __init__(self) -> None:
        self.cancel: Callable[[], object] | None = None
        self.terminated = False

    def on_signal(self, _number: int, _frame: FrameType | None) -> None:
        if self.terminated:
            return
        self.terminated = True
        if self.cancel is None:
            raise Terminated
        self.cancel()


_state: _State | None = None


@contextlib.contextmanager
def handling_sigterm() -> Iterator[None]:
    """For the block: SIGTERM closes as described above — not when SIGTERM is ignored (as it
    was inherited) or handled outside Python, nor off the main thread (no handler can be set
    there)."""
    global _state
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous is None or previous == signal.SIG_IGN:
        yield
        return
    outer, _state = _state, _State()
    signal.signal(signal.SIGTERM, _state.on_signal)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        _state = outer


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)``; a SIGTERM meanwhile cancels ``main`` and, once ``main`` has
    closed and the loop with it, raises ``Terminated``. Off the main thread (whose command the
    handler serves) it is plain ``asyncio.run``."""
    state = _state if threading.current_thread() is threading.main_thread() else None
    if state is None:
        return asyncio.run(main)
    result = asyncio.run(_cancellable(main, state))
    if state.terminated:
        raise Terminated
    return cast(T, result)


async def _cancellable(main: Coroutine[Any, Any, T], state: _State) -> T | None:
    """``main``, whose task ``state.cancel`` cancels from the signal handler; a cancellation
    that came from SIGTERM ends it with ``None`` (``run`` raises ``Terminated``)."""
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    state.cancel = lambda: loop.call_soon_threadsafe(task.cancel)
    try:
        return await main
    except asyncio.CancelledError:
        if not state.terminated:
            raise
        return None
    finally:
        state.cancel = None
