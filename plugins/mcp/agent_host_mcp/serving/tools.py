"""The five tools ``mcp serve`` offers, and how a call of each runs.

``subagent``, ``send_message``, ``interrupt_agent`` and ``list_agents`` are the root agent's
own tools, run as a model's call of them would be (``run_tool``: argument checks, the
approval policy, the texts of docs/subagents.md and structured results), with the root as the
calling agent; their descriptions and schemas are the host's. ``read_agent_messages`` is
``mailbox``'s. The structured result of ``list_agents``, an array in docs/subagents.md, is sent
as ``{"agents": [...]}`` (MCP's structured content is an object).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import mcp_types as types

from agent_host_mcp.serving import mailbox
from host.api import CancelSignal, new_id, run_tool
from host.tools import ToolExec, ToolResult

if TYPE_CHECKING:
    from host.api import Agent, ServiceContext

HOST_TOOLS = ("subagent", "send_message", "interrupt_agent", "list_agents")
"""The root's tools served as they are."""
WRAPPED = {"list_agents": "agents"}
"""Tools whose structured result is not an object: the key it is sent under."""
CANCELLED = "the MCP client cancelled the call"

ANNOTATIONS = {
    "subagent": types.ToolAnnotations(
        title="Start a subagent", read_only_hint=False, destructive_hint=True,
        idempotent_hint=False, open_world_hint=True,
    ),
    "send_message": types.ToolAnnotations(
        title="Send a subagent its next turn", read_only_hint=False, destructive_hint=True,
        idempotent_hint=False, open_world_hint=True,
    ),
    "interrupt_agent": types.ToolAnnotations(
        title="Stop a subagent's current turn", read_only_hint=False, destructive_hint=False,
        idempotent_hint=True, open_world_hint=False,
    ),
    "list_agents": types.ToolAnnotations(
        title="List subagents", read_only_hint=True, open_world_hint=False
    ),
    mailbox.NAME: types.ToolAnnotations(
        title="Read subagent reports", read_only_hint=True, open_world_hint=False
    ),
}
"""Honest hints: a subagent may run any tool the user's configuration gives it (not
read-only, possibly destructive, the open world); listing and reading change nothing."""


def listed(root: Agent) -> list[types.Tool]:
    """The tools, as ``tools/list`` gives them (a host tool the configuration blocked is
    left out)."""
    served = []
    for name in HOST_TOOLS:
        tool = root.tools.get(name)
        if tool is not None:
            served.append(
                types.Tool(
                    name=name, description=tool.describe(), input_schema=dict(tool.parameters),
                    annotations=ANNOTATIONS[name],
                )
            )
    served.append(
        types.Tool(
            name=mailbox.NAME, description=mailbox.DESCRIPTION, input_schema=mailbox.SCHEMA,
            output_schema=mailbox.OUTPUT_SCHEMA, annotations=ANNOTATIONS[mailbox.NAME],
        )
    )
    return served


async def call_host_tool(
    root: Agent, ctx: ServiceContext, name: str, arguments: Any
) -> types.CallToolResult:
    """Run the root's tool ``name`` as its model's call would run, with the host's services
    ``ctx``; a cancelled call interrupts what it started (a foreground child's turn)."""
    signal = CancelSignal()
    exec = ToolExec(agent=root, ctx=ctx, signal=signal, tool_call_id=new_id("mcp_"))
    tool = root.tools.get(name) if name in HOST_TOOLS else None
    try:
        result = await run_tool(tool, name, arguments, exec)
    except asyncio.CancelledError:
        signal.set(CANCELLED)
        raise
    return as_mcp(name, result)


def as_mcp(name: str, result: ToolResult) -> types.CallToolResult:
    """A host tool result as an MCP one: the text, the structured result as an object."""
    structured = result.structured
    if structured is not None and not isinstance(structured, dict):
        structured = {WRAPPED.get(name, "result"): structured}
    return types.CallToolResult(
        content=[types.TextContent(text=result.text)],
        structured_content=structured,
        is_error=result.is_error,
    )


def error(text: str) -> types.CallToolResult:
    """An error result the client's model reads."""
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)
