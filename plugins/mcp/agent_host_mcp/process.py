"""A stdio server's process as the connection needs it: its stderr read line by line, the end
of its output noticed, its exit awaited, its process group signalled, and (on Linux) a
parent-death signal set in it, so that it does not outlive a host that was killed.

Imports nothing of the SDK but what the stream wrapper forwards.
"""

from __future__ import annotations

import asyncio
import ctypes
import functools
import logging
import os
import signal
import sys
import time
from collections.abc import Callable
from contextlib import suppress
from typing import Any

import anyio

_LINE_CAP = 300
"""Error lines quote at most this many characters of the server's stderr."""


def one_line(text: str) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= _LINE_CAP else line[: _LINE_CAP - 1] + "…"


def sdk_process(transport: object) -> Any:
    """The ``anyio`` process ``stdio_client`` spawned, read from its suspended generator frame.

    The SDK exposes neither the pid nor the exit status; without them an exit cannot be
    reported with its status and the escalation falls back to the SDK's own (fixed) timeouts.
    """
    frame = getattr(getattr(transport, "gen", None), "ag_frame", None)
    process = None if frame is None else frame.f_locals.get("process")
    return process if hasattr(process, "returncode") and hasattr(process, "pid") else None


class EofWatch:
    """A read-stream proxy that reports the end of the transport (the server closed stdout)."""

    def __init__(self, inner: Any, on_eof: Callable[[], None]) -> None:
        self._inner = inner
        self._on_eof = on_eof

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_eof()
            raise

    def __aiter__(self) -> EofWatch:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> EofWatch:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class StderrLines:
    """Reads a server's stderr pipe on the loop: logs each line, keeps the last non-empty one."""

    def __init__(self, name: str) -> None:
        self._log = logging.getLogger(f"agent_host_mcp.server.{name}")
        self._read_fd, self._write_fd = os.pipe()
        os.set_blocking(self._read_fd, False)
        self._buffer = b""
        self.last_line = ""
        self.closed = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(self._read_fd, self._on_readable)

    def writer(self) -> Any:
        """A file object for the child's stderr; close it once the child is spawned."""
        return os.fdopen(self._write_fd, "w")

    def _on_readable(self) -> None:
        try:
            chunk = os.read(self._read_fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self._line(self._buffer)
            self._buffer = b""
            self.close()
            return
        *lines, self._buffer = (self._buffer + chunk).split(b"\n")
        for line in lines:
            self._line(line)

    def _line(self, raw: bytes) -> None:
        line = raw.decode("utf-8", "replace").rstrip()
        if line.strip():
            self.last_line = one_line(line)
            self._log.debug("%s", line)

    async def wait_closed(self, timeout: float) -> None:
        with suppress(TimeoutError):
            await asyncio.wait_for(self.closed.wait(), timeout)

    def close(self) -> None:
        if self.closed.is_set():
            return
        self.closed.set()
        self._loop.remove_reader(self._read_fd)
        os.close(self._read_fd)


async def wait_exit(process: Any, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while process.returncode is None:
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(0.01)
    return True


def signal_group(pid: int, sig: signal.Signals) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


_PR_SET_PDEATHSIG = 1
"""``prctl`` option: the signal a process gets when the thread that spawned it ends."""


def parent_death_hook() -> Callable[[], None] | None:
    """On Linux, a ``preexec_fn`` that has the child sent SIGTERM when the thread spawning it
    ends — with the host's process, even when that was SIGKILLed; ``None`` elsewhere.

    The signal follows the spawning *thread*, so spawn from one that lives as long as the
    server (the MCP loop's). A host that died before the hook ran is noticed (the child was
    adopted by another process): the child exits at once instead of running the server.
    """
    prctl = _prctl()
    if prctl is None:
        return None
    parent = os.getpid()
    number = int(signal.SIGTERM)

    def hook() -> None:
        prctl(_PR_SET_PDEATHSIG, number)
        if os.getppid() != parent:
            os._exit(1)

    return hook


@functools.cache
def _prctl() -> Callable[..., int] | None:
    """libc's ``prctl`` on Linux, looked up once; None elsewhere or when it cannot be found."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return prctl


class ServerLoop(asyncio.SelectorEventLoop):
    """An event loop whose ``subprocess_exec`` sets the parent-death signal in each child
    (``parent_death_hook``): the SDK spawns servers through it and offers no hook of its own."""

    async def subprocess_exec(
        self, protocol_factory: Callable[[], Any], program: Any, *args: Any, **kwargs: Any
    ) -> tuple[asyncio.SubprocessTransport, Any]:
        """``SelectorEventLoop.subprocess_exec``, the child given the parent-death signal
        unless the caller brought its own ``preexec_fn``."""
        if kwargs.get("preexec_fn") is None:
            kwargs["preexec_fn"] = parent_death_hook()
        return await super().subprocess_exec(protocol_factory, program, *args, **kwargs)
