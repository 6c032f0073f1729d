"""A server's ``notifications/progress`` for one call, passed to the agents' event loop as the
call's progress (``ToolExec.report_progress``): at most one every ``INTERVAL`` seconds, a
flood keeping only its latest, and nothing once the call has ended."""

from __future__ import annotations

import asyncio
import time
from contextlib import suppress

from host.tools import ToolExec

INTERVAL = 0.1
"""The shortest time between two progress reports of one call."""


class ProgressRelay:
    """Awaited on the MCP loop for each progress notification of a call (the SDK's progress
    callback); reports on ``host_loop``. Holds one pending notification at most."""

    def __init__(self, host_loop: asyncio.AbstractEventLoop, exec: ToolExec) -> None:
        self._host_loop = host_loop
        self._exec = exec
        self._pending: tuple[str, float, float | None] | None = None
        self._scheduled = False
        self._last = 0.0
        self._ended = False

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        """Keep the latest notification; report it now or once ``INTERVAL`` has passed."""
        if self._ended:
            return
        self._pending = (message or "", progress, total)
        if not self._scheduled:
            self._scheduled = True
            wait = self._last + INTERVAL - time.monotonic()
            asyncio.get_running_loop().call_later(max(0.0, wait), self._flush)

    def _flush(self) -> None:
        self._scheduled = False
        pending, self._pending = self._pending, None
        if pending is None or self._ended:
            return
        self._last = time.monotonic()
        with suppress(RuntimeError):  # the agents' loop closed meanwhile: nobody to tell
            self._host_loop.call_soon_threadsafe(self._report, *pending)

    def _report(self, message: str, progress: float, total: float | None) -> None:
        if not self._ended:
            self._exec.report_progress(message, progress, total)

    def end(self) -> None:
        """The call has ended: later notifications are dropped."""
        self._ended = True
