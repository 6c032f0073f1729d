"""A connection to one MCP server, on the official SDK's client, living on the ``McpLoop`` thread.

Each ``ServerConnection``'s whole life is one task on the loop. A *session* is one pass of it:
enter the transport (``stdio.StdioServer`` or ``http.open_http``) and a ``ClientSession``,
initialize within ``startup_timeout``, list the tools (every page), report ready, then wait to
be stopped or for the server to go away. Leaving a session stops a stdio server: stdin closed,
a grace period, SIGTERM to the server's process group, another grace period, SIGKILL.

A stdio server that dies stays dead (``on_exit`` hears its exit line). A streamable-HTTP
server whose transport fails after it was ready is reported the same way at once, then
reconnected in the background with capped exponential backoff (``http.Backoff``); once it
answers again its tools are listed afresh and ``on_back`` hears them. Calls made while it is
down answer the failure line at once.

This module imports the SDK; import it only when a server is configured.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Callable
from contextlib import AsyncExitStack, suppress
from typing import Any

import anyio
import mcp_types as types
from mcp.client.session import ClientSession, IncomingMessage

from agent_host_mcp.http import Backoff, open_http
from agent_host_mcp.loop import McpLoop
from agent_host_mcp.process import EofWatch
from agent_host_mcp.session import (
    Call,
    CallOutcome,
    ConnectionSpec,
    McpError,
    Progress,
    ToolInfo,
    bad_output,
    describe,
    list_tools,
)
from agent_host_mcp.stdio import EXIT_WAIT, STDERR_WAIT, StdioServer

__all__ = ["CallOutcome", "ConnectionSpec", "McpError", "ServerConnection", "ToolInfo"]

logger = logging.getLogger("agent_host_mcp")

# The SDK logs a server's unreadable output with tracebacks; with no handler configured the
# logging module's last resort would print them on the host's terminal. Records still reach
# the handlers the host configures.
logging.getLogger("mcp").addHandler(logging.NullHandler())

DEFAULT_GRACE = 2.0
"""Seconds a server gets after its stdin closes, and again after SIGTERM, before SIGKILL."""


class ServerConnection:
    """One MCP server: ``start``, ``wait_ready``, ``call_tool`` from any loop, ``close``.

    Blocking methods are for synchronous plugin activation; ``call_tool`` is awaited on the
    agents' event loop (any loop but the MCP one). Callbacks run on the MCP loop thread.
    """

    def __init__(
        self, spec: ConnectionSpec, loop: McpLoop, *, grace: float = DEFAULT_GRACE
    ) -> None:
        self.spec = spec
        self.name = spec.name
        self._loop = loop
        self._ready: concurrent.futures.Future[list[ToolInfo]] = concurrent.futures.Future()
        self._main: concurrent.futures.Future[None] | None = None
        self._tools: list[ToolInfo] = []
        self._relisting = False  # a re-listing task runs
        self._list_again = False  # the list changed again while it ran
        self._session: ClientSession | None = None
        self._stdio = StdioServer(spec, grace) if spec.transport == "stdio" else None
        self._error: str | None = None
        self._bad_output: str | None = None
        self._lost: str | None = None  # why an HTTP session's transport failed
        self._down: asyncio.Event | None = None  # set while no session is up
        self._wake: asyncio.Event | None = None
        self._connect_scope: anyio.CancelScope | None = None
        self._eof = False
        self._stopping = False
        self._closed = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._tools_changed: list[Callable[[list[ToolInfo]], object]] = []
        self._exit: list[Callable[[str], object]] = []
        self._back: list[Callable[[list[ToolInfo]], object]] = []
        self._backoff = Backoff()

    # -- the public surface ---------------------------------------------------------------

    @property
    def tools(self) -> list[ToolInfo]:
        """The tools as last listed."""
        return list(self._tools)

    @property
    def error(self) -> str | None:
        """The one-line failure while the server is failed or dead, else ``None``."""
        return self._error

    @property
    def reconnects(self) -> bool:
        """True for a server reconnected after its transport failed (streamable HTTP)."""
        return self._stdio is None

    @property
    def stderr_tail(self) -> str:
        """The last non-empty line the stdio server wrote to stderr (``""`` if none)."""
        stderr = None if self._stdio is None else self._stdio.stderr
        return "" if stderr is None else stderr.last_line

    @property
    def pid(self) -> int | None:
        """The stdio server's pid (also its process group), once spawned."""
        process = None if self._stdio is None else self._stdio.process
        return None if process is None else int(process.pid)

    def on_tools_changed(self, callback: Callable[[list[ToolInfo]], object]) -> None:
        """Call ``callback(tools)`` on the MCP loop thread after each re-listing that follows
        ``notifications/tools/list_changed``."""
        self._tools_changed.append(callback)

    def on_exit(self, callback: Callable[[str], object]) -> None:
        """Call ``callback(error_line)`` on the MCP loop thread each time the server dies or
        its transport fails after it was ready (not when it is closed)."""
        self._exit.append(callback)

    def on_back(self, callback: Callable[[list[ToolInfo]], object]) -> None:
        """Call ``callback(tools)`` on the MCP loop thread each time a reconnection after a
        transport failure succeeded (its tools listed afresh)."""
        self._back.append(callback)

    def start(self) -> None:
        """Begin connecting; returns at once. A second call does nothing."""
        if self._main is None and not self._closed:
            self._main = self._loop.submit(self._run())

    def wait_ready(self, timeout: float | None = None) -> list[ToolInfo]:
        """Block until the server is initialized and its tools are listed; raise ``McpError``."""
        self.start()
        try:
            return self._ready.result(timeout)
        except concurrent.futures.TimeoutError:
            raise McpError(f'MCP server "{self.name}" was not ready within {timeout}s') from None
        except concurrent.futures.CancelledError:
            raise McpError(f'MCP server "{self.name}" was closed') from None

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None, progress: Progress | None = None
    ) -> CallOutcome:
        """Call ``name`` on the server; every failure is an ``is_error`` outcome of one line.
        ``progress`` is awaited on the MCP loop for each ``notifications/progress`` of it.

        Cancelling the awaiting task sends ``notifications/cancelled`` for the request and
        re-raises at once.
        """
        if self._error is not None:
            return CallOutcome(self._error, is_error=True)
        call = Call(
            self.name,
            name,
            arguments,
            self.spec.call_timeout,
            self._closed_line,
            lambda: self._eof or self._lost is not None,
            progress,
        )
        return await asyncio.wrap_future(self._loop.submit(self._call(call)))

    def request_close(self) -> None:
        """Begin stopping the session and the server and return at once (``close`` waits):
        several servers asked first stop side by side."""
        self._closed = True
        main = self._main
        if main is not None and not main.done():
            with suppress(RuntimeError):
                self._loop.call_soon(self._request_stop)

    def close(self, grace: float | None = None) -> None:
        """Stop the session and the server process (blocking; idempotent).

        From the MCP loop thread (a callback) it only requests the stop.
        """
        if grace is not None and self._stdio is not None:
            self._stdio.grace = grace
        self._closed = True
        main = self._main
        if main is None:
            if not self._ready.done():
                self._ready.cancel()
            return
        if main.done():
            return
        with suppress(RuntimeError):
            self._loop.call_soon(self._request_stop)
        if self._loop.in_loop():
            return
        with suppress(Exception):
            grace_time = self._stdio.grace if self._stdio is not None else DEFAULT_GRACE
            main.result(timeout=4 * grace_time + 15.0)

    # -- on the MCP loop --------------------------------------------------------------------

    def _request_stop(self) -> None:
        self._stopping = True
        if self._connect_scope is not None:
            self._connect_scope.cancel()
        if self._wake is not None:
            self._wake.set()

    def _on_eof(self) -> None:
        self._eof = True
        if self._wake is not None:
            self._wake.set()

    def _on_transport_failure(self, error: BaseException) -> None:
        """An HTTP request did not reach the server: once it was ready, its session is lost."""
        if self._session is not None and self._lost is None and not self._stopping:
            url = self.spec.as_written().url  # as written: a ${VAR} in it may be a secret
            self._lost = f'MCP server "{self.name}" ({url}) is unreachable: {describe(error)}'
            if self._wake is not None:
                self._wake.set()

    async def _run(self) -> None:
        self._wake = asyncio.Event()
        self._down = asyncio.Event()
        try:
            while await self._session_life():
                with suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self._backoff.next())
                if self._stopping:
                    return
        except asyncio.CancelledError:
            pass  # the loop is closing: the session was left the graceful way
        finally:
            self._session = None
            for task in list(self._tasks):
                task.cancel()
            self._down.set()
            if not self._ready.done():
                closed = f'MCP server "{self.name}" was closed'
                self._ready.set_exception(McpError(self._error or closed))

    async def _session_life(self) -> bool:
        """One session: connect, serve until stopped or gone; True to reconnect after it."""
        assert self._wake is not None and self._down is not None
        self._wake.clear()
        self._eof, self._lost, self._bad_output = False, None, None
        was_ready = self._ready.done()
        try:
            async with AsyncExitStack() as stack:
                try:
                    tools = await self._connect(stack)
                except McpError as error:
                    # Reported once the stack is left: the server is gone by then.
                    if not was_ready:
                        self._error = self._error or error.message
                    return was_ready and self.reconnects and not self._stopping
                self._up(tools, was_ready)
                if not self._stopping:
                    try:
                        await self._wake.wait()
                    except asyncio.CancelledError:
                        # The loop is closing: stop the server the graceful way and end
                        # normally (the cancellation is taken as the stop request).
                        self._stopping = True
                if self._stopping:
                    return False
                self._session = None
                message = self._lost or await self._exit_message()
        except Exception as error:  # a transport failing; the server is stopped either way
            logger.debug("MCP server %r: transport raised", self.name, exc_info=True)
            if self._session is None and not was_ready:
                self._fail(self._reason("answer initialize", error))
                return False
            message = self._lost or self._reason("answer initialize", error)
        self._session = None
        self._died(message)
        return self.reconnects and not self._stopping

    def _up(self, tools: list[ToolInfo], was_ready: bool) -> None:
        """A session is up with ``tools``: ready at the first, back after a failure later."""
        assert self._down is not None
        self._tools, self._error = tools, None
        self._down.clear()
        if not was_ready:
            self._ready.set_result(list(tools))
            return
        self._backoff.reset()
        logger.info('MCP server "%s" is back', self.name)
        self._tell(self._back, list(tools), "on_back")

    def _died(self, message: str) -> None:
        """The server went away after it was ready: failed with ``message``, listeners told."""
        assert self._down is not None
        first = self._error is None
        self._fail(message)
        self._down.set()
        if first:
            self._tell(self._exit, message, "on_exit")

    def _tell(self, callbacks: list[Callable[[Any], object]], value: Any, what: str) -> None:
        for callback in callbacks:
            try:
                callback(value)
            except Exception:
                logger.exception("%s callback of MCP server %r raised", what, self.name)

    def _fail(self, message: str) -> None:
        if self._error is None:
            self._error = message
        if not self._ready.done():
            self._ready.set_exception(McpError(self._error))

    async def _connect(self, stack: AsyncExitStack) -> list[ToolInfo]:
        if self._stdio is None:
            read, write = await open_http(stack, self.spec, self._on_transport_failure)
        else:
            read, write = await self._stdio.open(stack)
        session = await stack.enter_async_context(
            ClientSession(EofWatch(read, self._on_eof), write, message_handler=self._on_message)
        )
        startup = self.spec.startup_timeout
        phase = "answer initialize"
        try:
            with anyio.CancelScope() as scope:
                self._connect_scope = scope
                if self._stopping:
                    scope.cancel()
                with anyio.fail_after(startup):
                    await session.initialize()
                    phase = "list its tools"
                    tools = await list_tools(session)
            self._connect_scope = None
            if scope.cancelled_caught:
                raise McpError(f'MCP server "{self.name}" was closed while starting')
        except TimeoutError:
            note = "" if self._bad_output is None else f" (unreadable output: {self._bad_output})"
            raise McpError(
                f'MCP server "{self.name}" did not {phase} within {startup:g}s{note}'
            ) from None
        except McpError:
            raise
        except Exception as error:  # MCPError included
            if self._eof or (self._stdio is not None and self._stdio.exited):
                raise McpError(await self._exit_message()) from None
            raise McpError(self._reason(phase, error)) from None
        self._session = session
        return tools

    def _reason(self, phase: str, error: BaseException) -> str:
        text = describe(error)
        if self._stdio is None and phase == "answer initialize":
            url = self.spec.as_written().url  # as written: a ${VAR} in it may be a secret
            return f'MCP server "{self.name}" ({url}) failed to connect: {text}'
        action = "initialize" if phase == "answer initialize" else phase
        return f'MCP server "{self.name}" failed to {action}: {text}'

    async def _exit_message(self) -> str:
        if self._stdio is None:
            return f'MCP server "{self.name}" closed the connection'
        return await self._stdio.exit_message()

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, Exception):
            logger.debug("MCP server %r: transport error: %s", self.name, message)
            self._bad_output = bad_output(message)
            return
        if isinstance(message, types.ToolListChangedNotification):
            if self._relisting:  # one listing at a time: it lists again once done
                self._list_again = True
                return
            self._relisting = True
            task = asyncio.get_running_loop().create_task(self._relist())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _relist(self) -> None:
        """List the tools until no change was announced during a listing (an older, slower
        listing can then never replace a newer one)."""
        try:
            self._list_again = True
            while self._list_again:
                self._list_again = False
                await self._list_once()
        finally:
            self._relisting = False

    async def _list_once(self) -> None:
        session = self._session
        if session is None:
            return
        try:
            with anyio.fail_after(self.spec.call_timeout):
                tools = await list_tools(session)
        except Exception as error:
            logger.warning("MCP server %r: re-listing tools failed: %s", self.name, error)
            return
        self._tools = tools
        self._tell(self._tools_changed, list(tools), "on_tools_changed")

    async def _call(self, call: Call) -> CallOutcome:
        session = self._session
        if self._error is not None:
            return CallOutcome(self._error, is_error=True)
        if session is None:
            state = "is closed" if self._closed else "is not connected"
            return CallOutcome(f'MCP server "{self.name}" {state}', is_error=True)
        return await call.run(session)

    async def _closed_line(self) -> str:
        """The death line once the end is known (bounded), else that the server is closed."""
        if self._down is not None and not self._stopping:
            with suppress(TimeoutError):
                await asyncio.wait_for(self._down.wait(), EXIT_WAIT + STDERR_WAIT + 1.0)
        return self._error or f'MCP server "{self.name}" is closed'
