"""A connection to one MCP server, on the official SDK's client, living on the ``McpLoop`` thread.

Each ``ServerConnection``'s whole life is one task on the loop: it enters the transport
(``stdio_client`` or ``streamable_http_client``) and a ``ClientSession``, initializes within
``startup_timeout``, lists the tools (every page), reports ready, then waits to be stopped or
for the server to die. Leaving it stops the server: stdin closed, a grace period, SIGTERM to
the server's process group, another grace period, SIGKILL — no orphaned process.

The server's stderr goes to a pipe this module reads: each line is logged at DEBUG on
``agent_host_mcp.server.<name>`` and the last non-empty one is kept for error lines.

This module imports the SDK; import it only when a server is configured.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import signal
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack, suppress
from typing import Any, Literal, Protocol

import anyio
import attrs
import mcp_types as types
from mcp.client.session import ClientSession, IncomingMessage
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from agent_host_mcp.content import render_content
from agent_host_mcp.loop import McpLoop
from agent_host_mcp.process import (
    EofWatch,
    StderrLines,
    one_line,
    sdk_process,
    signal_group,
    wait_exit,
)

logger = logging.getLogger("agent_host_mcp")

# The SDK logs a server's unreadable output with tracebacks; with no handler configured the
# logging module's last resort would print them on the host's terminal. Records still reach
# the handlers the host configures.
logging.getLogger("mcp").addHandler(logging.NullHandler())

DEFAULT_GRACE = 2.0
"""Seconds a server gets after its stdin closes, and again after SIGTERM, before SIGKILL."""

_PAGE_CAP = 100
"""At most this many ``tools/list`` pages: a paginator that never ends cannot hang a start."""

_EXIT_WAIT = 2.0
"""How long a server whose output ended gets to exit before it counts as hung."""

_STDERR_WAIT = 0.5
"""How long to wait for the last stderr bytes of a server that exited."""


class McpError(Exception):
    """A connection failed; ``message`` is one line naming the server."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ConnectionSpec(Protocol):
    """What a connection needs to know about its server (``config.ServerSpec`` provides it)."""

    @property
    def name(self) -> str: ...
    @property
    def transport(self) -> Literal["stdio", "http"]: ...
    @property
    def command(self) -> str | None: ...
    @property
    def args(self) -> tuple[str, ...]: ...
    @property
    def env(self) -> Mapping[str, str]: ...
    @property
    def cwd(self) -> str | None: ...
    @property
    def url(self) -> str | None: ...
    @property
    def headers(self) -> Mapping[str, str]: ...
    @property
    def startup_timeout(self) -> float: ...
    @property
    def call_timeout(self) -> float: ...
    def as_written(self) -> ConnectionSpec:
        """The definition as written in its file (``${VAR}`` unexpanded), for lines to show."""
        ...


@attrs.frozen
class ToolInfo:
    """One tool as the server lists it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None


@attrs.frozen
class CallOutcome:
    """A tool call's result: text contents joined by newlines, one placeholder line per other
    content block, ``structuredContent`` as ``structured``; failures are one ``is_error`` line."""

    text: str
    structured: Any = None
    is_error: bool = False


class CancelWaiter(Protocol):
    """An ``asyncio.Event`` or the host's ``CancelSignal``: anything with ``async wait()``."""

    def wait(self) -> Awaitable[object]: ...


def _leaf(error: BaseException) -> BaseException:
    """The first innermost exception of (nested) exception groups."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def _describe(error: BaseException) -> str:
    error = _leaf(error)
    text = str(error)
    return one_line(f"{type(error).__name__}: {text}" if text else type(error).__name__)


def _bad_output(error: Exception) -> str:
    """One short phrase for what the transport could not read (pydantic errors are long)."""
    errors = getattr(error, "errors", None)
    if callable(errors):
        with suppress(Exception):
            first = errors()[0]
            return f"not JSON-RPC: {one_line(repr(first.get('input')))[:80]}"
    return _describe(error)


def _tool_info(tool: types.Tool) -> ToolInfo:
    return ToolInfo(
        name=tool.name,
        description=tool.description or "",
        input_schema=dict(tool.input_schema),
        output_schema=None if tool.output_schema is None else dict(tool.output_schema),
    )


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
        self._grace = grace
        self._ready: concurrent.futures.Future[list[ToolInfo]] = concurrent.futures.Future()
        self._main: concurrent.futures.Future[None] | None = None
        self._tools: list[ToolInfo] = []
        self._session: ClientSession | None = None
        self._process: Any = None
        self._stderr: StderrLines | None = None
        self._error: str | None = None
        self._bad_output: str | None = None
        self._dead: asyncio.Event | None = None
        self._wake: asyncio.Event | None = None
        self._connect_scope: anyio.CancelScope | None = None
        self._eof = False
        self._stopping = False
        self._closed = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._tools_changed: list[Callable[[list[ToolInfo]], object]] = []
        self._exit: list[Callable[[str], object]] = []

    # -- the public surface ---------------------------------------------------------------

    @property
    def tools(self) -> list[ToolInfo]:
        """The tools as last listed."""
        return list(self._tools)

    @property
    def error(self) -> str | None:
        """The one-line failure once the server failed or died, else ``None``."""
        return self._error

    @property
    def stderr_tail(self) -> str:
        """The last non-empty line the stdio server wrote to stderr (``""`` if none)."""
        return "" if self._stderr is None else self._stderr.last_line

    @property
    def pid(self) -> int | None:
        """The stdio server's pid (also its process group), once spawned."""
        process = self._process
        return None if process is None else int(process.pid)

    def on_tools_changed(self, callback: Callable[[list[ToolInfo]], object]) -> None:
        """Call ``callback(tools)`` on the MCP loop thread after each re-listing that follows
        ``notifications/tools/list_changed``."""
        self._tools_changed.append(callback)

    def on_exit(self, callback: Callable[[str], object]) -> None:
        """Call ``callback(error_line)`` once, on the MCP loop thread, if the server dies
        after it was ready (not when it is closed)."""
        self._exit.append(callback)

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
        self,
        name: str,
        arguments: dict[str, Any] | None,
        *,
        cancel: CancelWaiter | None = None,
    ) -> CallOutcome:
        """Call ``name`` on the server; every failure is an ``is_error`` outcome of one line.

        Cancelling the awaiting task sends ``notifications/cancelled`` for the request and
        re-raises at once; ``cancel`` set does the same but returns an error outcome.
        """
        if self._error is not None:
            return CallOutcome(self._error, is_error=True)
        future = asyncio.wrap_future(self._loop.submit(self._call(name, arguments)))
        if cancel is None:
            return await future
        waiter: asyncio.Future[Any] = asyncio.ensure_future(cancel.wait())
        racers: set[asyncio.Future[Any]] = {future, waiter}
        try:
            await asyncio.wait(racers, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            future.cancel()
            raise
        finally:
            waiter.cancel()
        if future.done():
            return future.result()
        future.cancel()
        return CallOutcome(f'MCP server "{self.name}": call of "{name}" cancelled', is_error=True)

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
        if grace is not None:
            self._grace = grace
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
            main.result(timeout=4 * self._grace + 15.0)

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

    async def _run(self) -> None:
        self._wake = asyncio.Event()
        self._dead = asyncio.Event()
        try:
            async with AsyncExitStack() as stack:
                try:
                    tools = await self._connect(stack)
                except McpError as error:
                    # Reported once the stack is left: the server is gone by then.
                    self._error = self._error or error.message
                    return
                self._tools = tools
                if not self._ready.done():
                    self._ready.set_result(list(tools))
                if not self._stopping:
                    try:
                        await self._wake.wait()
                    except asyncio.CancelledError:
                        # The loop is closing: stop the server the graceful way and end
                        # normally (the cancellation is taken as the stop request).
                        self._stopping = True
                if self._stopping:
                    return
                message = await self._exit_message()
                self._fail(message)
                for callback in self._exit:
                    try:
                        callback(message)
                    except Exception:
                        logger.exception("on_exit callback of MCP server %r raised", self.name)
        except Exception as error:  # a transport failing; the server is stopped either way
            logger.debug("MCP server %r: transport raised", self.name, exc_info=True)
            self._fail(self._reason("answer initialize", error))
        finally:
            self._session = None
            for task in list(self._tasks):
                task.cancel()
            if self._stderr is not None:
                self._stderr.close()
            self._dead.set()
            if not self._ready.done():
                closed = f'MCP server "{self.name}" was closed'
                self._ready.set_exception(McpError(self._error or closed))

    def _fail(self, message: str) -> None:
        if self._error is None:
            self._error = message
        if self._dead is not None:
            self._dead.set()
        if not self._ready.done():
            self._ready.set_exception(McpError(self._error))

    async def _connect(self, stack: AsyncExitStack) -> list[ToolInfo]:
        spec = self.spec
        if spec.transport == "http":
            read, write = await self._open_http(stack)
        else:
            read, write = await self._open_stdio(stack)
        session = await stack.enter_async_context(
            ClientSession(EofWatch(read, self._on_eof), write, message_handler=self._on_message)
        )
        phase = "answer initialize"
        try:
            with anyio.CancelScope() as scope:
                self._connect_scope = scope
                if self._stopping:
                    scope.cancel()
                with anyio.fail_after(spec.startup_timeout):
                    await session.initialize()
                    phase = "list its tools"
                    tools = await self._list_tools(session)
            self._connect_scope = None
            if scope.cancelled_caught:
                raise McpError(f'MCP server "{self.name}" was closed while starting')
        except TimeoutError:
            note = "" if self._bad_output is None else f" (unreadable output: {self._bad_output})"
            raise McpError(
                f'MCP server "{self.name}" did not {phase} within {spec.startup_timeout:g}s{note}'
            ) from None
        except MCPError as error:
            if self._eof or self._process_exited():
                raise McpError(await self._exit_message()) from None
            raise McpError(self._reason(phase, error)) from None
        except McpError:
            raise
        except Exception as error:
            if self._eof or self._process_exited():
                raise McpError(await self._exit_message()) from None
            raise McpError(self._reason(phase, error)) from None
        self._session = session
        return tools

    def _reason(self, phase: str, error: BaseException) -> str:
        text = _describe(error)
        if self.spec.transport == "http" and phase == "answer initialize":
            url = self.spec.as_written().url  # as written: a ${VAR} in it may be a secret
            return f'MCP server "{self.name}" ({url}) failed to connect: {text}'
        action = "initialize" if phase == "answer initialize" else phase
        return f'MCP server "{self.name}" failed to {action}: {text}'

    def _process_exited(self) -> bool:
        return self._process is not None and self._process.returncode is not None

    async def _open_stdio(self, stack: AsyncExitStack) -> tuple[Any, Any]:
        spec = self.spec
        if not spec.command:
            raise McpError(f'MCP server "{self.name}" could not start: no command')
        params = StdioServerParameters(
            command=spec.command, args=list(spec.args), env=dict(spec.env) or None, cwd=spec.cwd
        )
        self._stderr = stderr = StderrLines(self.name)
        stack.callback(stderr.close)
        errlog = stderr.writer()
        transport = stdio_client(params, errlog=errlog)
        try:
            read, write = await stack.enter_async_context(transport)
        except OSError as error:
            reason = error.strerror or str(error)
            command = spec.as_written().command  # as written: a ${VAR} in it may be a secret
            message = f'MCP server "{self.name}" could not start: {reason}: {command}'
            raise McpError(message) from None
        except ValueError as error:
            raise McpError(f'MCP server "{self.name}" could not start: {error}') from None
        finally:
            errlog.close()
        self._process = sdk_process(transport)
        if self._process is not None:
            # Runs before the SDK's own teardown (LIFO), which then finds the server gone.
            stack.push_async_callback(self._stop_process)
        return read, write

    async def _open_http(self, stack: AsyncExitStack) -> tuple[Any, Any]:
        spec = self.spec
        if not spec.url:
            raise McpError(f'MCP server "{self.name}" could not start: no url')
        client = create_mcp_http_client(headers=dict(spec.headers) or None)
        await stack.enter_async_context(client)
        read, write = await stack.enter_async_context(
            streamable_http_client(spec.url, http_client=client)
        )
        return read, write

    async def _stop_process(self) -> None:
        """Close stdin, wait ``grace``, SIGTERM the group, wait ``grace``, SIGKILL the group."""
        process = self._process
        if process.returncode is None:
            with suppress(Exception):
                await process.stdin.aclose()
            if not await wait_exit(process, self._grace):
                signal_group(process.pid, signal.SIGTERM)
                if not await wait_exit(process, self._grace):
                    signal_group(process.pid, signal.SIGKILL)
                    await wait_exit(process, _EXIT_WAIT)
        else:
            # The leader is gone; what it left in its group goes too.
            signal_group(process.pid, signal.SIGKILL)

    async def _exit_message(self) -> str:
        process = self._process
        status: str = "unknown"
        if process is not None:
            if await wait_exit(process, _EXIT_WAIT):
                code = int(process.returncode)
                status = f"status {code}" if code >= 0 else f"signal {-code}"
            else:
                status = "still running, output closed"
        if self._stderr is not None:
            await self._stderr.wait_closed(_STDERR_WAIT)
        tail = self._stderr.last_line if self._stderr is not None else ""
        if self.spec.transport == "http":
            return f'MCP server "{self.name}" closed the connection'
        return f'MCP server "{self.name}" exited ({status})' + (f": {tail}" if tail else "")

    async def _list_tools(self, session: ClientSession) -> list[ToolInfo]:
        tools: list[ToolInfo] = []
        cursor: str | None = None
        for _ in range(_PAGE_CAP):
            params = None if cursor is None else types.PaginatedRequestParams(cursor=cursor)
            page = await session.list_tools(params=params)
            tools.extend(_tool_info(tool) for tool in page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        return tools

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, Exception):
            logger.debug("MCP server %r: transport error: %s", self.name, message)
            self._bad_output = _bad_output(message)
            return
        if isinstance(message, types.ToolListChangedNotification):
            task = asyncio.get_running_loop().create_task(self._relist())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _relist(self) -> None:
        session = self._session
        if session is None:
            return
        try:
            with anyio.fail_after(self.spec.call_timeout):
                tools = await self._list_tools(session)
        except Exception as error:
            logger.warning("MCP server %r: re-listing tools failed: %s", self.name, error)
            return
        self._tools = tools
        for callback in self._tools_changed:
            try:
                callback(list(tools))
            except Exception:
                logger.exception("on_tools_changed callback of MCP server %r raised", self.name)

    async def _call(self, name: str, arguments: dict[str, Any] | None) -> CallOutcome:
        session = self._session
        if self._error is not None:
            return CallOutcome(self._error, is_error=True)
        if session is None:
            state = "is closed" if self._closed else "is not connected"
            return CallOutcome(f'MCP server "{self.name}" {state}', is_error=True)
        timeout = self.spec.call_timeout
        try:
            result = await session.call_tool(name, arguments, read_timeout_seconds=timeout)
        except MCPError as error:
            if error.code == types.REQUEST_TIMEOUT:
                return CallOutcome(
                    f'MCP server "{self.name}": tool "{name}" did not answer within {timeout:g}s',
                    is_error=True,
                )
            if error.code == types.CONNECTION_CLOSED:
                return CallOutcome(await self._closed_line(), is_error=True)
            return CallOutcome(
                f'MCP server "{self.name}": tool "{name}" failed: {one_line(error.message)}',
                is_error=True,
            )
        except Exception as error:
            if self._eof:
                return CallOutcome(await self._closed_line(), is_error=True)
            text = one_line(str(error) or type(error).__name__)
            return CallOutcome(
                f'MCP server "{self.name}": tool "{name}" failed: {text}', is_error=True
            )
        return CallOutcome(
            render_content(list(result.content)),
            structured=result.structured_content,
            is_error=bool(result.is_error),
        )

    async def _closed_line(self) -> str:
        """The death line once the exit is known (bounded), else that the server is closed."""
        if self._dead is not None and not self._stopping:
            with suppress(TimeoutError):
                await asyncio.wait_for(self._dead.wait(), _EXIT_WAIT + _STDERR_WAIT + 1.0)
        return self._error or f'MCP server "{self.name}" is closed'
