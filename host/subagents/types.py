"""The values the subagent service takes and returns (docs/subagents.md)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal

import attrs

if TYPE_CHECKING:  # annotations only: the descriptors (and their converter) load when used
    from host.sessions.model import StopReason
    from host.subagents.descriptors import MemorySpec
    from host.tools.filter import ToolFilter

ChildMode = Literal["continuable", "one-shot"]
"""How a child runs: ``continuable`` (it can be resumed and messaged, in the background by
default) or ``one-shot`` (one task to its end)."""
ReportDelivery = Literal["next-step", "quiet"]
"""How a child's report reaches its parent (``report_from``): ``next-step`` is seen at the
parent's next step and also wakes an idle parent, ``quiet`` is only seen at its next step. An
inbox message's own delivery is ``host.sessions.model.Delivery``."""
Seeding = Literal["fresh", "fork"]
SourceKind = Literal["coordinator", "subagent-start", "subagent-report", "subagent-settled"]

ORIGIN = "subagent"
"""The ``origin`` of every session the subagent service creates (``SessionHeader.origin``)."""


@attrs.frozen
class MessageSource:
    """Who sent a subagent message: the ``source`` its inbox records (docs/subagents.md).

    The kinds: ``coordinator`` (a parent's ``send_message``), ``subagent-start`` (a child's
    first prompt, with the parent's ``tool_call_id`` when a tool call started it: an approval
    request finds its origin there), ``subagent-report`` and ``subagent-settled`` (a child to
    its parent). A source is recorded, never treated as authority. Session logs keep it as
    ``as_dict()``: ``kind``, ``sender_session_id``, then ``tool_call_id`` only when there is one.
    """

    kind: SourceKind
    sender_session_id: str
    tool_call_id: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape stored in session logs and read back (``host.approvals.records``)."""
        source: dict[str, Any] = {"kind": self.kind, "sender_session_id": self.sender_session_id}
        if self.tool_call_id is not None:
            source["tool_call_id"] = self.tool_call_id
        return source


@attrs.frozen
class ProviderCapabilities:
    """What children of a provider may do: depth limit, tool filter, persona, continuation."""

    depth_limit: int = 3
    tool_filter: ToolFilter | None = None
    persona: str | None = None
    continuable: bool = True


@attrs.frozen
class Provider:
    """A named, data-only way to start children: ``fresh`` sessions or ``fork``s of the parent."""

    name: str
    seeding: Seeding = "fresh"
    capabilities: ProviderCapabilities = ProviderCapabilities()


@attrs.frozen
class ChildRequest:
    """What a parent asks a child to do; ``label`` is the display name kept in the descriptor.

    ``parent_tool_call_id`` is the parent's tool call that starts the child; it travels in the
    start message's ``source`` (``tool_call_id``), where an approval request finds its origin.
    ``profile`` and ``mcp_servers`` name the profile the child is started from (and its MCP
    servers), ``memory`` that profile's memory (its tools and index prompt section); a
    continuable child's descriptor keeps them, with ``max_steps``.
    """

    prompt: str
    label: str | None = None
    model: str | None = None
    persona: str | None = None
    tool_filter: ToolFilter | None = None
    max_steps: int | None = None
    parent_tool_call_id: str | None = None
    profile: str | None = None
    mcp_servers: list[str] | None = None
    memory: MemorySpec | None = None

    def start_source(self, parent_id: str) -> dict[str, Any]:
        """The ``source`` of the child's start message."""
        return MessageSource("subagent-start", parent_id, self.parent_tool_call_id).as_dict()


@attrs.frozen
class RunResult:
    """How a one-shot child ended: its stop reason and final (or partial) text."""

    child_id: str
    stop_reason: StopReason
    text: str | None = None
    error: str | None = None


@attrs.frozen
class SubagentRun:
    """A published one-shot child: its id at once, its result when it ends.

    Failures after publication settle through ``result()``; the run keeps its id.
    """

    id: str
    result: Callable[[], Awaitable[RunResult]]


@attrs.frozen
class ContinuableStart:
    """A started continuable child and the id of its first message, accepted in its inbox."""

    child_id: str
    message_id: str
