"""What listing returns: one entry per listed subagent, a child or a diagnostic."""

from __future__ import annotations

from typing import Literal

import attrs

from host.subagents.types import ChildMode

Activity = Literal["running", "inactive"]
LeaseStatus = Literal["running", "idle"]
DiagnosticReason = Literal["corrupt", "unsupported", "unavailable"]


@attrs.frozen
class ChildEntry:
    """A listed subagent. ``parent_id``/``depth`` are set by ``list_descendants`` only.

    ``lease_status`` is, for a child not live in this process, ``running``/``idle`` when some
    host holds a live lease on it (backends with leases, such as PostgreSQL); ``None`` when
    nobody does or the backend has no leases.
    """

    id: str
    mode: ChildMode
    activity: Activity
    label: str | None = None
    parent_id: str | None = None
    depth: int | None = None
    kind: Literal["child"] = "child"
    lease_status: LeaseStatus | None = None


@attrs.frozen
class DiagnosticEntry:
    """A subagent that cannot be listed, and why (no descriptor content, ever)."""

    id: str
    reason: DiagnosticReason
    parent_id: str | None = None
    depth: int | None = None
    kind: Literal["diagnostic"] = "diagnostic"


SubagentListEntry = ChildEntry | DiagnosticEntry
