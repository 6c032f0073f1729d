"""Tools described by a JSON Schema given as is (``schema_tool``): offered, checked, executed."""

from __future__ import annotations

from typing import Any

from host.services import Services
from host.tools import ToolResult, schema_tool
from host.tools.execute import run_tool
from host.tools.tool import ToolExec  # the engine's, which an agentless call builds

SCHEMA = {
    "type": "object",
    "properties": {"count": {"type": "integer", "minimum": 1}},
    "required": ["count"],
}


def check(raw: Any) -> list[str]:
    """A stand-in for a full JSON Schema validator: only what this test's schema says."""
    count = raw.get("count")
    if not isinstance(count, int):
        return ["count: required integer"]
    return [] if count >= 1 else ["count: must be at least 1"]


async def repeat(arguments: dict[str, Any], exec: ToolExec) -> ToolResult:
    return ToolResult("x" * arguments["count"], structured=arguments)


TOOL = schema_tool("repeat", "Repeat x.", SCHEMA, repeat, check=check, needs_agent=False)


def test_the_schema_is_offered_as_given():
    assert TOOL.parameters is SCHEMA
    assert TOOL.params is dict


async def test_valid_arguments_reach_execute_as_a_dict():
    result = await run_tool(TOOL, "repeat", {"count": 3}, ToolExec(agent=None, ctx=Services()))
    assert result == ToolResult("xxx", structured={"count": 3})


async def test_the_check_decides_and_its_problems_reach_the_model():
    result = await run_tool(TOOL, "repeat", {"count": 0}, ToolExec(agent=None, ctx=Services()))
    assert result == ToolResult.error("invalid arguments for repeat: count: must be at least 1")


async def test_arguments_that_are_not_an_object_are_refused_before_the_check():
    result = await run_tool(TOOL, "repeat", [1, 2], ToolExec(agent=None, ctx=Services()))
    assert result == ToolResult.error(
        "invalid arguments for repeat: arguments: expected object, got list"
    )
