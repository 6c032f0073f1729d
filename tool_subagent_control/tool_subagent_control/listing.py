"""The list plugin (``list_agents``): loadable on its own, needs ``subagents`` and ``agents``.

The request is resolved to a ``ListSpec`` first; the service's catalog is then projected to
the rows ``send_message`` and ``interrupt_agent`` can act on (``host.subagents.rows``, which
front ends list the tree with too).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from host import hookimpl
from host.api import HostError, ListScope, entries_of, listing_text, rows_of
from host.tools import ToolExec, ToolResult, tool

if TYPE_CHECKING:
    from host.api import RegisterTool

requires = ("subagents", "agents")


LIST_AGENTS_DESCRIPTION = (
    "List the background subagents you started, to recall their ids and labels. Do not poll "
    "it to wait for work: you are told when a subagent finishes. Status: running (working on "
    "a turn), idle (resident between turns, perhaps waiting on its own subagents), ready "
    "(stored, not terminal: send_message resumes it), waiting (blocked until the user approves "
    "or denies its tool call or answers its question; send_message resumes a stored one, which "
    "asks again). scope 'children' (default) lists your direct subagents; 'descendants' "
    "lists the whole tree with parent= and depth=. Only depth-1 entries accept send_message; "
    "deeper ones are interrupt_agent candidates. The list is a snapshot."
)


@attrs.frozen
class ListAgentsArgs:
    """Arguments of ``list_agents``."""

    scope: ListScope = attrs.field(
        default="children",
        metadata={"description": "children (default): direct subagents; descendants: the tree."},
    )


@attrs.frozen
class ListSpec:
    """A resolved request: whose subagents, and how far down."""

    root_id: str
    scope: ListScope


def resolve(args: ListAgentsArgs, exec: ToolExec) -> ListSpec:
    """The spec a call stands for (the root is always the calling agent)."""
    return ListSpec(root_id=exec.agent.id, scope=args.scope)


def waiting_in(exec: ToolExec) -> set[str]:
    """The agents of the caller's tree blocked on a request to the user (none without an
    ``approvals`` service)."""
    approvals = exec.ctx.find("approvals")
    if approvals is None or exec.agent is None:
        return set()
    waiting: set[str] = approvals.waiting(exec.agent)
    return waiting


@tool("list_agents", LIST_AGENTS_DESCRIPTION, ListAgentsArgs, concurrency_safe=True)
async def list_agents(args: ListAgentsArgs, exec: ToolExec) -> ToolResult:
    """List the caller's continuable subagents and diagnostics."""
    spec = resolve(args, exec)
    try:
        entries = await entries_of(exec.ctx.subagents, spec.root_id, spec.scope, exec.signal)
    except HostError as error:
        return ToolResult.error(f"list_agents failed ({error.code}): {error.message}")
    rows = rows_of(entries, exec.ctx.agents, spec.scope, waiting_in(exec))
    return ToolResult(listing_text(rows), structured=rows)


@hookimpl
def register_tools(register: RegisterTool) -> None:
    """Register ``list_agents``."""
    register(list_agents)
