"""The protocol session with one MCP server, whatever its transport: what it needs to know of
its server, the tools as listed (every page), a tool call and its failures as one line each,
and what a server's unreadable output or failing transport is called in those lines.

This module imports the SDK; import it only when a server is configured.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextlib import suppress
from typing import TYPE_CHECKING, Any, Protocol

import attrs
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError

from agent_host_mcp.content import render_content
from agent_host_mcp.process import one_line

if TYPE_CHECKING:
    from agent_host_mcp.config import Transport

PAGE_CAP = 100
"""At most this many ``tools/list`` pages: a paginator that never ends cannot hang a start."""

Progress = ProgressFnT
"""``await progress(progress, total, message)``: a ``notifications/progress`` of a call."""


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
    def transport(self) -> Transport: ...
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
    """One tool as the server lists it; ``read_only`` when it is annotated ``readOnlyHint``
    and not ``destructiveHint``; ``task_support`` its ``execution.taskSupport``, if any."""

    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    read_only: bool = False
    task_support: str | None = None


@attrs.frozen
class CallOutcome:
    """A tool call's result: text contents joined by newlines, one placeholder line per other
    content block, ``structuredContent`` as ``structured``; failures are one ``is_error`` line."""

    text: str
    structured: Any = None
    is_error: bool = False


def leaf(error: BaseException) -> BaseException:
    """The first innermost exception of (nested) exception groups."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def describe(error: BaseException) -> str:
    """``Type: message`` of the innermost exception, on one line."""
    error = leaf(error)
    text = str(error)
    return one_line(f"{type(error).__name__}: {text}" if text else type(error).__name__)


def bad_output(error: Exception) -> str:
    """One short phrase for what the transport could not read (pydantic errors are long)."""
    errors = getattr(error, "errors", None)
    if callable(errors):
        with suppress(Exception):
            first = errors()[0]
            return f"not JSON-RPC: {one_line(repr(first.get('input')))[:80]}"
    return describe(error)


def tool_info(tool: types.Tool) -> ToolInfo:
    """What the host keeps of a listed tool."""
    notes = tool.annotations
    read_only = notes is not None and notes.read_only_hint is True
    execution = tool.execution
    return ToolInfo(
        name=tool.name,
        description=tool.description or "",
        input_schema=dict(tool.input_schema),
        output_schema=None if tool.output_schema is None else dict(tool.output_schema),
        read_only=read_only and notes is not None and notes.destructive_hint is not True,
        task_support=None if execution is None else execution.task_support,
    )


async def list_tools(session: ClientSession) -> list[ToolInfo]:
    """Every tool the server lists, over at most ``PAGE_CAP`` pages."""
    tools: list[ToolInfo] = []
    cursor: str | None = None
    for _ in range(PAGE_CAP):
        params = None if cursor is None else types.PaginatedRequestParams(cursor=cursor)
        page = await session.list_tools(params=params)
        tools.extend(tool_info(tool) for tool in page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools


@attrs.frozen
class Call:
    """One ``tools/call`` of server ``server``; ``closed_line`` is awaited for the line of a
    connection that ended under it, ``ended`` says whether the transport has ended."""

    server: str
    name: str
    arguments: dict[str, Any] | None
    timeout: float
    closed_line: Callable[[], Awaitable[str]]
    ended: Callable[[], bool]
    progress: Progress | None = None

    def failed(self, text: str) -> CallOutcome:
        """The error outcome ``MCP server "<server>": tool "<name>" failed: <text>``."""
        return CallOutcome(
            f'MCP server "{self.server}": tool "{self.name}" failed: {text}', is_error=True
        )

    async def run(self, session: ClientSession) -> CallOutcome:
        """Call the tool; every failure is an ``is_error`` outcome of one line."""
        try:
            result = await session.call_tool(
                self.name,
                self.arguments,
                read_timeout_seconds=self.timeout,
                progress_callback=self.progress,
            )
        except MCPError as error:
            if error.code == types.REQUEST_TIMEOUT:
                line = f'tool "{self.name}" did not answer within {self.timeout:g}s'
                return CallOutcome(f'MCP server "{self.server}": {line}', is_error=True)
            if error.code == types.CONNECTION_CLOSED or self.ended():
                return CallOutcome(await self.closed_line(), is_error=True)
            return self.failed(one_line(error.message))
        except Exception as error:
            if self.ended():
                return CallOutcome(await self.closed_line(), is_error=True)
            return self.failed(one_line(str(error) or type(error).__name__))
        if not isinstance(result, types.CallToolResult):  # asked for input, or an extension's
            return self.failed(f"unexpected answer {type(result).__name__}")
        return CallOutcome(
            render_content(list(result.content)),
            structured=result.structured_content,
            is_error=bool(result.is_error),
        )
