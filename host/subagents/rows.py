"""The subagent tree as rows: what ``list_agents`` shows and front ends list (``subagent/list``).

The service's catalog is projected to what ``send_message`` and ``interrupt_agent`` can act on:
continuable children (status from the live agent registry) and every diagnostic. One-shot
children are left out. A child with a request to the user still open (``approvals.waiting``:
asked now, or left pending in the root's log by a restart until the child is resumed) is
``waiting``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from host.agents.registry import AgentRegistry
    from host.cancel import CancelSignal
    from host.subagents.entries import ChildEntry, SubagentListEntry
    from host.subagents.service import SubagentService

ListScope = Literal["children", "descendants"]
"""How far below the root ``list_agents`` lists (its ``scope``): its children, or every
descendant."""
Status = Literal["running", "idle", "ready", "waiting"]


def status_of(agents: AgentRegistry, entry: ChildEntry, waiting: Collection[str] = ()) -> Status:
    """``waiting`` for an id in ``waiting`` (a request to the user open); else ``running``/
    ``idle`` from the live registry, else from a live lease of another host
    (``entry.lease_status``); ``ready`` when only storage holds it."""
    if entry.id in waiting:
        return "waiting"
    live = agents.status(entry.id)
    if live is not None:
        return live
    return "ready" if entry.lease_status is None else entry.lease_status


async def entries_of(
    subagents: SubagentService,
    root_id: str,
    scope: ListScope,
    signal: CancelSignal | None = None,
) -> list[SubagentListEntry]:
    """The subagent service's catalog below ``root_id``: its children, or every descendant."""
    if scope == "children":
        return await subagents.list_children(root_id, signal=signal)
    return await subagents.list_descendants(root_id, signal=signal)


def rows_of(
    entries: Sequence[SubagentListEntry],
    agents: AgentRegistry,
    scope: ListScope,
    waiting: Collection[str] = (),
) -> list[dict[str, Any]]:
    """Continuable children and every diagnostic, as structured rows (``waiting``: the ids
    with a request to the user open)."""
    rows: list[dict[str, Any]] = []
    for entry in entries:
        row: dict[str, Any]
        if entry.kind == "child":
            if entry.mode != "continuable":
                continue
            row = {"kind": "child", "id": entry.id, "label": entry.label}
            row["status"] = status_of(agents, entry, waiting)
        else:
            row = {"kind": "diagnostic", "id": entry.id, "reason": entry.reason}
        if scope == "descendants":
            row["parent"], row["depth"] = entry.parent_id, entry.depth
        rows.append(row)
    return rows


def listing_text(rows: Sequence[dict[str, Any]]) -> str:
    """One line per row, ``(no subagents)`` when there are none."""
    lines = []
    for row in rows:
        place = f" parent={row['parent']} depth={row['depth']}" if "depth" in row else ""
        if row["kind"] == "child":
            lines.append(f"{row['id']} [{row['status']}]{place} — {row['label']}")
        else:
            lines.append(f"{row['id']} [diagnostic: {row['reason']}]{place}")
    return "\n".join(lines) if lines else "(no subagents)"
