"""Running one tool call: every failure becomes an error result the model sees."""

from __future__ import annotations

import json
from typing import Any

from host.errors import HostError
from host.serialization import converter
from host.tools.tool import Tool, ToolExec, ToolResult


async def run_tool(
    tool: Tool | None, name: str, raw_args: Any, exec: ToolExec, *, approved: bool = False
) -> ToolResult:
    """Execute one call of ``name``, its ``tool`` as looked up once (None: no one offers it);
    unknown tools, bad arguments and raising tools become errors.

    With an ``approvals`` service, valid arguments first meet the approval policy: the tool
    runs only once the service said so (``host.approvals.service``) — unless the call's
    approval is ``approved`` already (a request asked again after a restart,
    ``host.approvals.resume``): the service is not asked again.

    ``asyncio.CancelledError`` still propagates: interrupting a turn is not a tool failure.
    """
    if tool is None:
        return unknown_tool(name, exec)
    if tool.needs_agent and exec.agent is None:
        return ToolResult.error(f"{tool.name} requires a calling agent")
    try:
        args = tool.arguments.parse(raw_args)
    except ValueError as error:
        return ToolResult.error(f"invalid arguments for {tool.name}: {error}")
    ctx = exec.ctx  # None: an agent built without services
    approvals = ctx.find("approvals") if ctx is not None and not approved else None
    if approvals is not None:  # a call that needs consent waits here; a denial ends it here
        try:
            denial: ToolResult | None = await approvals.check(tool, args, raw_args, exec)
        except HostError as error:  # e.g. the request could not be recorded: nothing runs
            return ToolResult.error(f"{tool.name} was not run: {error.message}")
        except Exception as error:
            return ToolResult.error(f"{tool.name} was not run: {type(error).__name__}: {error}")
        if denial is not None:
            return denial
    try:  # what the tool raises (but cancellation) becomes an error result
        result = await tool.execute(args, exec)
    except HostError as error:
        return ToolResult.error(f"{tool.name} failed: {error.message}")
    except Exception as error:
        return ToolResult.error(f"{tool.name} failed: {type(error).__name__}: {error}")
    return as_result(tool.name, result)


def unknown_tool(name: str, exec: ToolExec) -> ToolResult:
    """The error result of a call of a tool no one offers: the failure line of the plugin
    that offered it when it failed (a dead server stays named), else ``unknown tool``."""
    plugins = exec.ctx.find("plugins") if exec.ctx is not None else None
    lost = plugins.lost_tool(name) if plugins is not None else None
    return ToolResult.error(lost or f'unknown tool "{name}"')


def as_result(name: str, value: Any) -> ToolResult:
    """What tool ``name`` returned, as the model sees it: a ``ToolResult`` as is, a string as
    its text, None as empty text, any other JSON-able value as its JSON text (and as the
    structured result); anything else is an error result."""
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, str):
        return ToolResult(value)
    if value is None:
        return ToolResult("")
    try:
        structured = converter.unstructure(value)
        return ToolResult(json.dumps(structured, ensure_ascii=False), structured=structured)
    except (TypeError, ValueError) as error:
        return ToolResult.error(f"{name} returned {type(value).__name__}, not JSON: {error}")
