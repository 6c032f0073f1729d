"""Running one tool call: every failure becomes an error result the model sees."""

from __future__ import annotations

from typing import Any

import cattrs

from host.errors import HostError
from host.serialization import converter
from host.tools.schema import validate
from host.tools.tool import Tool, ToolExec, ToolResult


def parse_arguments(tool: Tool, raw: Any) -> Any:
    """Validate ``raw`` against the tool's schema and build its params (a schema tool gets the
    dict as is); raise ``ValueError``."""
    if tool.schema is not None and not isinstance(raw, dict):
        raise ValueError(f"arguments: expected object, got {type(raw).__name__}")
    problems = tool.check(raw) if tool.check is not None else validate(tool.parameters, raw)
    if problems:
        raise ValueError("; ".join(problems))
    if tool.schema is not None:
        return dict(raw)
    try:
        return converter.structure(raw, tool.params)
    except (cattrs.BaseValidationError, TypeError, ValueError) as error:
        raise ValueError(str(error)) from None


async def run_tool(tool: Tool | None, name: str, raw_args: Any, exec: ToolExec) -> ToolResult:
    """Execute one call of ``name``; unknown tools, bad arguments and raising tools become errors.

    ``asyncio.CancelledError`` still propagates: interrupting a turn is not a tool failure.
    """
    if tool is None:
        return ToolResult.error(f'unknown tool "{name}"')
    if tool.needs_agent and exec.agent is None:
        return ToolResult.error(f"{tool.name} requires a calling agent")
    try:
        args = parse_arguments(tool, raw_args)
    except ValueError as error:
        return ToolResult.error(f"invalid arguments for {tool.name}: {error}")
    try:
        result = await tool.execute(args, exec)
    except HostError as error:
        return ToolResult.error(f"{tool.name} failed: {error.message}")
    except Exception as error:
        return ToolResult.error(f"{tool.name} failed: {type(error).__name__}: {error}")
    if isinstance(result, str):
        return ToolResult(result)
    return result
