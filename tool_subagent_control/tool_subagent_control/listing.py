"""The list plugin (``list_agents``): loadable on its own, needs ``subagents`` and ``agents``.

The request is resolved to a ``ListSpec`` first; the service's catalog is then projected to
what ``send_message`` and ``interrupt_agent`` can act on: continuable children (status from
the live agent registry) and every diagnostic. One-shot children are left out. A child with
a request to the user still open (``approvals.waiting``: asked now, or left pending in the
root's log by a restart until the child is resumed) is ``waiting``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any, Literal

import attrs

from host import hookimpl
from host.errors import HostError
from host.tools import ToolExec, ToolResult, tool

if TYPE_CHECKING:
    from host.api import RegisterTool

requires = ("subagents", "agents")

Scope = Literal["children", "descendants"]
Status = Literal["running", "idle", "ready", "waiting"]

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

    scope: Scope = attrs.field(
        default="children",
        metadata={"description": "children (default): direct subagents; descendants: the tree."},
    )


@attrs.frozen
class ListSpec:
    """A resolved request: whose subagents, and how far down."""

    root_id: str
    scope: Scope


def resolve(args: ListAgentsArgs, exec: ToolExec) -> ListSpec:
    """The spec a call stands for (the root is always the calling agent)."""
    return ListSpec(root_id=exec.agent.id, scope=args.scope)


def status_of(agents: Any, entry: Any, waiting: Collection[str] = ()) -> Status:
    """``waiting`` for an id in ``waiting`` (a request to the user open); else ``running``/
    ``idle`` from the live registry, else from a live lease of another host
    (``entry.lease_status``); ``ready`` when only storage holds it."""
    if entry.id in waiting:
        return "waiting"
    live = agents.status(entry.id)
    if live is not None:
        return live  # type: ignore[no-any-return]
    lease: Status | None = getattr(entry, "lease_status", None)
    return "ready" if lease is None else lease


def project(
    entries: Sequence[Any], agents: Any, spec: ListSpec, waiting: Collection[str] = ()
) -> list[dict[str, Any]]:
    """Continuable children and every diagnostic, as structured rows (``waiting``: the ids
    with a request to the user open)."""
    rows: list[dict[str, Any]] = []
    for entry in entries:
        if entry.kind == "child":
            if entry.mode != "continuable":
                continue
            row = {"kind": "child", "id": entry.id, "label": entry.label}
            row["status"] = status_of(agents, entry, waiting)
        else:
            row = {"kind": "diagnostic", "id": entry.id, "reason": entry.reason}
        if spec.scope == "descendants":
            row["parent"], row["depth"] = entry.parent_id, entry.depth
        rows.append(row)
    return rows


def render(rows: Sequence[dict[str, Any]]) -> str:
    """One line per row, ``(no subagents)`` when there are none."""
    lines = []
    for row in rows:
        place = f" parent={row['parent']} depth={row['depth']}" if "depth" in row else ""
        if row["kind"] == "child":
            lines.append(f"{row['id']} [{row['status']}]{place} — {row['label']}")
        else:
            lines.append(f"{row['id']} [diagnostic: {row['reason']}]{place}")
    return "\n".join(lines) if lines else "(no subagents)"


def waiting_in(exec: ToolExec) -> set[str]:
    """The agents of the caller's tree blocked on a request to the user (none without an
    ``approvals`` service)."""
    find = getattr(exec.ctx, "find", None)
    approvals = find("approvals") if find is not None else None
    if approvals is None or exec.agent is None:
        return set()
    waiting: set[str] = approvals.waiting(exec.agent)
    return waiting


@tool("list_agents", LIST_AGENTS_DESCRIPTION, ListAgentsArgs, concurrency_safe=True)
async def list_agents(args: ListAgentsArgs, exec: ToolExec) -> ToolResult:
    """List the caller's continuable subagents and diagnostics."""
    spec = resolve(args, exec)
    subagents = exec.ctx.subagents
    try:
        if spec.scope == "children":
            entries = await subagents.list_children(spec.root_id, signal=exec.signal)
        else:
            entries = await subagents.list_descendants(spec.root_id, signal=exec.signal)
    except HostError as error:
        return ToolResult.error(f"list_agents failed ({error.code}): {error.message}")
    rows = project(entries, exec.ctx.agents, spec, waiting_in(exec))
    return ToolResult(render(rows), structured=rows)


@hookimpl
def register_tools(register: RegisterTool) -> None:
    """Register ``list_agents``."""
    register(list_agents)
