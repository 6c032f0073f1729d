"""MCP tools as host tools: names, argument checks against the server's schema, results.

An MCP tool ``t`` of server ``s`` becomes the host tool ``s__t``, its name made valid for
OpenAI-compatible APIs (``^[a-zA-Z0-9_-]{1,64}$``) deterministically: other characters become
``_``, and a name over 64 characters keeps its first 55 and gains ``_`` plus 8 hex digits of
its hash. Its JSON Schema is the server's ``inputSchema`` as given; arguments are checked
against the full schema with ``jsonschema`` before the call. A tool whose schema is not a valid
object schema, or that runs only as a task, is skipped with a warning naming it.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable, Iterable
from typing import Any

import attrs
import jsonschema
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for

from agent_host_mcp.connection import CallOutcome, ToolInfo
from agent_host_mcp.content import logged_structured
from host.tools import Tool, ToolExec, ToolResult, schema_tool

log = logging.getLogger("agent_host_mcp")

SEPARATOR = "__"
NAME_LIMIT = 64
_INVALID = re.compile(r"[^a-zA-Z0-9_-]")

TASK_ONLY = "it runs only as a task (execution.taskSupport required), which is not supported"
"""Why a task-only tool is skipped: the SDK's client offers no ``tasks`` utility."""

Caller = Callable[[str, dict[str, Any], ToolExec], Any]
"""``call(mcp_tool_name, arguments, exec)``: awaitable ``CallOutcome`` (one call is a
``session.Call``)."""


def host_name(server: str, tool: str) -> str:
    """The host tool name of MCP tool ``tool`` of ``server`` (see the module docstring)."""
    name = _INVALID.sub("_", f"{server}{SEPARATOR}{tool}")
    if len(name) <= NAME_LIMIT:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[: NAME_LIMIT - 9]}_{digest}"


def schema_problem(schema: Any) -> str | None:
    """Why ``schema`` cannot describe a tool's arguments, or None."""
    if not isinstance(schema, dict):
        return "its inputSchema is not an object"
    if schema.get("type", "object") != "object":
        return f"its inputSchema has type {schema.get('type')!r}, not 'object'"
    try:
        validator_for(schema).check_schema(schema)
    except SchemaError as error:
        return f"its inputSchema is not a valid JSON Schema: {error.message}"
    return None


def argument_check(schema: dict[str, Any]) -> Callable[[Any], list[str]]:
    """A check of raw arguments against ``schema`` (every problem, one short line each)."""
    validator = validator_for(schema)(schema, format_checker=jsonschema.FormatChecker())

    def check(arguments: Any) -> list[str]:
        problems = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
        return [_describe(problem) for problem in problems]

    return check


def _describe(problem: jsonschema.ValidationError) -> str:
    where = ".".join(str(part) for part in problem.absolute_path) or "arguments"
    return f"{where}: {problem.message}"


def to_result(outcome: CallOutcome) -> ToolResult:
    """A call's outcome as the host's tool result: its structured part without media, and
    none when that only repeats the text (``logged_structured``)."""
    structured = logged_structured(outcome.text, outcome.structured)
    return ToolResult(outcome.text, is_error=outcome.is_error, structured=structured)


@attrs.frozen
class Adapted:
    """The host tools made from a server's tool list, and the lines of what was skipped."""

    tools: list[Tool]
    skipped: list[str]


def adapt(
    server: str, infos: Iterable[ToolInfo], call: Caller, allows: Callable[[str], bool]
) -> Adapted:
    """Host tools for the tools of ``server`` that ``allows`` lets through; a tool with a bad
    schema, or whose host name another of its tools already took, is skipped with a line."""
    tools: list[Tool] = []
    skipped: list[str] = []
    taken: dict[str, str] = {}
    for info in infos:
        if not allows(info.name):
            continue
        name = host_name(server, info.name)
        problem = schema_problem(info.input_schema)
        if info.task_support == "required":
            problem = TASK_ONLY
        if problem is None and name in taken:
            problem = f'its name {name} is already the name of its tool "{taken[name]}"'
        if problem is not None:
            skipped.append(f'MCP server "{server}": tool "{info.name}" skipped: {problem}')
            continue
        taken[name] = info.name
        tools.append(_tool(name, info, call))
    for line in skipped:
        log.warning("%s", line)
    return Adapted(tools, skipped)


def _tool(name: str, info: ToolInfo, call: Caller) -> Tool:
    async def execute(arguments: dict[str, Any], exec: ToolExec) -> ToolResult:
        return to_result(await call(info.name, arguments, exec))

    return schema_tool(
        name,
        info.description or f"The {info.name} tool of an MCP server.",
        info.input_schema,
        execute,
        check=argument_check(info.input_schema),
        concurrency_safe=info.read_only,
        needs_agent=False,
    )
