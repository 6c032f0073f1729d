"""The events of the feed (``host.clients.feed``): what a front end hears about a thread.

Each event names the thread it was delivered for (``thread_id``: the session a front end
follows, usually a root) and, when it comes from a stored event, the session that stored it
and its ``seq`` (the thread's own session for turns, items and approvals; a subagent's for
``subagent/*``). Streamed text (``ItemStarted`` of a live ``agentMessage`` and
``AgentMessageDelta``) and tool progress (``ToolCallProgress``) have no ``seq``: they are
never stored and never replayed; nor has the
tree as a replay states it. ``METHOD`` is
the event's name on the wire.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from host.clients.items import Item
from host.clients.tree import MemberStatus
from host.serialization import camel_case
from host.sessions.model import ApprovalOrigin, Decision


@camel_case
@attrs.frozen
class Origin:
    """Who asked the user: the innermost requesting agent, its session, label and depth, and
    the parent's tool call that started it."""

    agent_id: str
    session_id: str
    label: str | None
    depth: int
    parent_tool_call_id: str | None

    @classmethod
    def of(cls, origin: ApprovalOrigin) -> Origin:
        """The origin a log records."""
        return cls(
            origin.agent_id, origin.session_id, origin.label, origin.depth,
            origin.parent_tool_call_id,
        )


@camel_case
@attrs.frozen
class TurnStarted:
    """A turn of the thread began."""

    METHOD: ClassVar[str] = "turn/started"
    thread_id: str
    session_id: str
    seq: int
    turn_id: str


@camel_case
@attrs.frozen
class TurnCompleted:
    """A turn of the thread ended; ``stop_reason`` says how (``error`` with its message)."""

    METHOD: ClassVar[str] = "turn/completed"
    thread_id: str
    session_id: str
    seq: int
    turn_id: str
    stop_reason: str
    error: str | None = None


@camel_case
@attrs.frozen
class ItemStarted:
    """An item begins: a stored item, just before its ``item/completed`` (with its session
    and ``seq``), or the model began streaming the text of an ``agentMessage`` (no ``seq``;
    ``item.id`` is the stream's id, which its deltas and its ``item/completed`` name as
    ``streamId``)."""

    METHOD: ClassVar[str] = "item/started"
    thread_id: str
    turn_id: str | None
    item: Item
    session_id: str | None = None
    seq: int | None = None


@camel_case
@attrs.frozen
class AgentMessageDelta:
    """A piece of streamed text of the item ``item_id`` (never stored, never replayed)."""

    METHOD: ClassVar[str] = "item/agentMessage/delta"
    thread_id: str
    turn_id: str | None
    item_id: str
    delta: str


@camel_case
@attrs.frozen
class ToolCallProgress:
    """How far the tool call ``item_id`` has got, as its tool reports it (never stored, never
    replayed); ``progress``/``total`` are numbers when the tool gives them."""

    METHOD: ClassVar[str] = "item/toolCall/progress"
    thread_id: str
    turn_id: str | None
    item_id: str
    message: str
    progress: float | None = None
    total: float | None = None


@camel_case
@attrs.frozen
class ItemCompleted:
    """A transcript item was stored; ``stream_id`` names the stream that showed its text."""

    METHOD: ClassVar[str] = "item/completed"
    thread_id: str
    session_id: str
    seq: int
    turn_id: str | None
    item: Item
    stream_id: str | None = None


@camel_case
@attrs.frozen
class SubagentStarted:
    """A subagent joined the thread's tree (first seen appending to its log: ``seq`` is the
    last of that append; None when a replay states the tree as it is); ``turn_id`` is the
    thread's turn in progress then, if any."""

    METHOD: ClassVar[str] = "subagent/started"
    thread_id: str
    session_id: str
    seq: int | None
    turn_id: str | None
    subagent_id: str
    parent_id: str
    label: str | None
    depth: int


@camel_case
@attrs.frozen
class SubagentStatus:
    """A subagent of the tree is now ``running``, ``idle``, ``waiting`` or ``settled``
    (``seq``: of the subagent's log, None when a replay states the tree as it is;
    ``turn_id``: the thread's turn in progress then, if any)."""

    METHOD: ClassVar[str] = "subagent/status"
    thread_id: str
    session_id: str
    seq: int | None
    turn_id: str | None
    subagent_id: str
    status: MemberStatus


@camel_case
@attrs.frozen
class ApprovalRequestedEvent:
    """A request to the user was recorded in the thread's log (from any depth of its tree)."""

    METHOD: ClassVar[str] = "approval/requested"
    thread_id: str
    session_id: str
    seq: int
    request_id: str
    origin: Origin
    tool: str
    arguments: Any
    question: str | None = None
    choices: list[str] | None = None


@camel_case
@attrs.frozen
class ApprovalDecidedEvent:
    """A request to the user was decided (by whichever front end answered, or its timeout)."""

    METHOD: ClassVar[str] = "approval/decided"
    thread_id: str
    session_id: str
    seq: int
    request_id: str
    decision: Decision
    reason: str | None = None
    answer: str | None = None


ClientEvent = (
    TurnStarted
    | TurnCompleted
    | ItemStarted
    | AgentMessageDelta
    | ToolCallProgress
    | ItemCompleted
    | SubagentStarted
    | SubagentStatus
    | ApprovalRequestedEvent
    | ApprovalDecidedEvent
)

EVENT_TYPES: tuple[type[ClientEvent], ...] = (
    TurnStarted,
    TurnCompleted,
    ItemStarted,
    AgentMessageDelta,
    ToolCallProgress,
    ItemCompleted,
    SubagentStarted,
    SubagentStatus,
    ApprovalRequestedEvent,
    ApprovalDecidedEvent,
)
