"""Session headers, session ids and the event kinds a session log holds.

A log is a header followed by events; every event carries a per-session ``seq`` starting at 0.
Model-visible events are messages and compaction summaries; everything else is model-hidden.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any, Literal, get_args

import attrs

from host.errors import HostError

SESSION_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")

StopReason = Literal["completed", "interrupted", "error", "max_steps", "max_tokens"]
Role = Literal["user", "assistant", "tool"]
Delivery = Literal["followup", "steer", "inject"]


class SessionIdError(HostError):
    """A session id that cannot be a file name: it is refused before anything is written."""

    def __init__(self, session_id: object) -> None:
        shown = repr(session_id)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        super().__init__(
            "INVALID_SESSION_ID",
            f"invalid session id {shown}: ids match [A-Za-z0-9][A-Za-z0-9_-]{{0,63}}",
        )


def validate_session_id(session_id: object) -> str:
    """Return ``session_id`` if it is a valid id, else raise ``SessionIdError``."""
    if not isinstance(session_id, str) or SESSION_ID_PATTERN.fullmatch(session_id) is None:
        raise SessionIdError(session_id)
    return session_id


_UUID4_CLEAR = ~((0xF000 << 64) | (0xC000 << 48))
_UUID4_SET = (0x4000 << 64) | (0x8000 << 48)


def new_id(prefix: str = "") -> str:
    """A fresh random id that is a valid session id (also used for message and turn ids):
    ``prefix`` and a random (version 4) UUID's 32 hex digits, made here from 16 random bytes
    as ``uuid.uuid4().hex`` makes them, without building a ``UUID`` (several per child)."""
    value = int.from_bytes(os.urandom(16), "big") & _UUID4_CLEAR | _UUID4_SET
    return f"{prefix}{value:032x}"


def now_ns() -> int:
    """Wall-clock time in integer nanoseconds, the unit of ``created_at``."""
    return time.time_ns()


@attrs.frozen
class SessionHeader:
    """The immutable first line of a session log.

    ``origin`` is ``"subagent"`` for sessions the subagent service created; ``seed_length``
    counts the events a fork copied from its parent, so own events start at that ``seq``.
    ``label`` is the label its agent was created with, when it was created by
    ``AgentRegistry.create`` without a header of its own (a root); None in logs older than it.
    ``profile`` is the canonical name of the profile a root was started from (applied again
    whenever it is resumed); None for a root without one, a child, and older logs.
    ``model`` is the registered model such a root was started on when it was named instead of
    the profile's (it resumes on it); None otherwise.
    """

    id: str = attrs.field(validator=lambda _i, _a, v: validate_session_id(v))
    parent_session: str | None = None
    created_at: int = attrs.field(factory=now_ns)
    origin: str | None = None
    delegation_depth: int = 0
    seed_length: int = 0
    label: str | None = None
    profile: str | None = None
    model: str | None = None

    def sort_key(self) -> tuple[int, str]:
        """Creation order: ``created_at``, ties broken by id."""
        return (self.created_at, self.id)


@attrs.frozen
class ToolCall:
    """One tool call an assistant message asked for."""

    id: str
    name: str
    arguments: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class MessageEvent:
    """A model-visible message. ``source`` says who sent a user message (never authority)."""

    role: Role
    content: str
    message_id: str = attrs.field(factory=lambda: new_id("msg_"))
    source: dict[str, Any] | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    is_error: bool = False
    structured: Any = None
    kind: Literal["message"] = "message"


@attrs.frozen
class InboxAccepted:
    """A message accepted into the inbox; written before its ``message_id`` is returned."""

    message_id: str
    delivery: Delivery
    content: str
    source: dict[str, Any] | None = None
    kind: Literal["inbox/accepted"] = "inbox/accepted"


@attrs.frozen
class InboxClaimed:
    """Accepted messages a step took into the conversation (their user messages follow)."""

    message_ids: tuple[str, ...]
    kind: Literal["inbox/claimed"] = "inbox/claimed"


@attrs.frozen
class TurnStart:
    """A turn began."""

    turn_id: str
    kind: Literal["turn/start"] = "turn/start"


@attrs.frozen
class TurnEnd:
    """A turn ended, and why."""

    turn_id: str
    stop_reason: StopReason
    error: str | None = None
    kind: Literal["turn/end"] = "turn/end"


@attrs.frozen
class Compaction:
    """A summary that replaces every visible message with ``seq <= through_seq``."""

    summary: str
    through_seq: int
    kind: Literal["compaction"] = "compaction"


@attrs.frozen
class SubagentDescriptorEvent:
    """Model-hidden: the raw subagent descriptor (parsed and judged by the subagent service)."""

    descriptor: Any
    kind: Literal["subagent/descriptor"] = "subagent/descriptor"


@attrs.frozen
class PluginEvent:
    """A plugin-defined event; ``type`` is namespaced by the plugin; model-hidden."""

    plugin: str
    type: str
    data: Any = None
    kind: Literal["plugin"] = "plugin"


@attrs.frozen
class ApprovalOrigin:
    """Who asked: the innermost requesting agent, its session, delegation depth and label, and
    the parent's tool call that started it (None for a root, or when unknown)."""

    agent_id: str
    session_id: str
    depth: int = 0
    label: str | None = None
    parent_tool_call_id: str | None = None


Decision = Literal["approved", "approved_for_session", "denied", "answered", "cancelled"]


@attrs.frozen
class ApprovalRequested:
    """Model-hidden: a tool call (or, from ``ask_user``, a question) waiting for the root's
    user; in the requesting agent's log, mirrored with its origin into the root's."""

    request_id: str
    tool: str
    arguments: Any
    tool_call_id: str
    origin: ApprovalOrigin
    question: str | None = None
    choices: list[str] | None = None
    kind: Literal["approval/requested"] = "approval/requested"


@attrs.frozen
class ApprovalDecided:
    """Model-hidden: how a request ended; recorded (durably) before an approved tool runs."""

    request_id: str
    decision: Decision
    reason: str | None = None
    answer: str | None = None
    kind: Literal["approval/decided"] = "approval/decided"


EventBody = (
    MessageEvent
    | InboxAccepted
    | InboxClaimed
    | TurnStart
    | TurnEnd
    | Compaction
    | SubagentDescriptorEvent
    | PluginEvent
    | ApprovalRequested
    | ApprovalDecided
)

MODEL_VISIBLE_KINDS = frozenset({"message", "compaction"})


@attrs.frozen
class Event:
    """A stored event: its position ``seq`` in the session and its body."""

    seq: int
    body: EventBody

    @property
    def kind(self) -> str:
        """The body's kind tag, e.g. ``"message"`` or ``"subagent/descriptor"``."""
        return self.body.kind

    @property
    def model_hidden(self) -> bool:
        """True for events the model never sees (everything but messages and compaction)."""
        return self.body.kind not in MODEL_VISIBLE_KINDS


EVENT_BODY_TYPES: dict[str, type[EventBody]] = {
    attrs.fields(cls).kind.default: cls for cls in get_args(EventBody)
}
"""Every event body class by its ``kind`` tag."""
