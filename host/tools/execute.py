"""Running one tool call: every failure becomes an error result the model sees."""

from __future__ import annotations

import json
from typing import Any

import cattrs

from host.errors import HostError
from host.schema import validate
from host.serialization import converter
from host.tools.tool import Tool, ToolExec, ToolResult


def parse_arguments(tool: Tool, raw: Any) -> Any:
    """Validate ``raw`` against the tool's schema and build its params (a schema or function
    tool gets the dict as is); raise ``ValueError``."""
    if tool.check is not None and not isinstance(raw, dict):
        raise ValueError(f"arguments: expected object, got {type(raw).__name__}")
    problems = tool.check(raw) if tool.check is not None else validate(tool.parameters, raw)
    if problems:
        raise ValueError("; ".join(problems))
    if tool.check is not None:
        return dict(raw)
    try:
        return converter.structure(raw, tool.params)
    except (cattrs.BaseValidationError, TypeError, ValueError) as error:
        raise ValueError(str(error)) from None


async def run_tool(tool: Tool | None, name: str, raw_args: Any, exec: ToolExec) -> ToolResult:
    """Execute one call of ``name``; unknown tools, bad arguments and raising tools become errors.

    With an ``approvals`` service, valid arguments first meet the approval policy: the tool
    runs only once the service said so (``host.approvals.service``).

    ``asyncio.CancelledError`` still propagates: interrupting a turn is not a tool failure.
    """
    if tool is None:
        return unknown_tool(name, exec)
    if tool.needs_agent and exec.agent is None:
        return ToolResult.error(f"{tool.name} requires a calling agent")
    try:
        args = parse_arguments(tool, raw_args)
    except ValueError as error:
        return ToolResult.error(f"invalid arguments for {tool.name}: {error}")
    find = getattr(exec.ctx, "find", None)  # an agent built without services has no ctx
    approvals = find("approvals") if find is not None else None
    if approvals is not None:  # a call that needs consent waits here; a denial ends it here
        try:
            denial: ToolResult | None = await approvals.check(tool, args, raw_args, exec)
        except HostError as error:  # e.g. the request could not be recorded: nothing runs
            return ToolResult.error(f"{tool.name} was not run: {error.message}")
        except Exception as error:
            return ToolResult.error(f"{tool.name} was not run: {type(error).__name__}: {error}")
        if denial is not None:
            return denial
    return await _execute(tool, args, exec)


def unknown_tool(name: str, exec: ToolExec) -> ToolResult:
    """The error result of a call of a tool no one offers: the failure line of the plugin
    that offered it when it failed (a dead server stays named), else ``unknown tool``."""
    find = getattr(exec.ctx, "find", None)
    plugins = find("plugins") if find is not None else None
    lost = plugins.lost_tool(name) if plugins is not None else None
    return ToolResult.error(lost or f'unknown tool "{name}"')


async def run_approved(tool: Tool | None, name: str, raw_args: Any, exec: ToolExec) -> ToolResult:
    """Execute one call whose approval is already recorded (a request asked again after a
    restart, ``host.approvals.resume``): ``run_tool`` without asking the service again."""
    if tool is None:
        return unknown_tool(name, exec)
    try:
        args = parse_arguments(tool, raw_args)
    except ValueError as error:
        return ToolResult.error(f"invalid arguments for {tool.name}: {error}")
    return await _execute(tool, args, exec)


async def _execute(tool: Tool, args: Any, exec: ToolExec) -> ToolResult:
    """Run the tool; what it raises (but cancellation) becomes an error result."""
    try:
        result = await tool.execute(args, exec)
    except HostError as error:
        return ToolResult.error(f"{tool.name} failed: {error.message}")
    except Exception as error:
        return ToolResult.error(f"{tool.name} failed: {type(error).__name__}: {error}")
    return as_result(tool.name, result)


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
