"""The values the subagent service takes and returns (DESIGN §6, §10)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Literal

import attrs

if TYPE_CHECKING:  # annotations only: the descriptors (and their converter) load when used
    from host.sessions.model import StopReason
    from host.subagents.descriptors import ToolFilterSpec

Delivery = Literal["quiet", "next-step"]
Seeding = Literal["fresh", "fork"]


@attrs.frozen
class ProviderCapabilities:
    """What children of a provider may do: depth limit, tool filter, persona, continuation."""

    depth_limit: int = 3
    tool_filter: ToolFilterSpec | None = None
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
    """What a parent asks a child to do; ``label`` is the display name kept in the descriptor."""

    prompt: str
    label: str | None = None
    model: str | None = None
    persona: str | None = None
    tool_filter: ToolFilterSpec | None = None
    max_steps: int | None = None


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
