"""A session's transcript as items: what a front end shows of each stored event.

``items_of(event)`` is the one reading of a stored event as transcript items: a person's or a
parent's message (``userMessage``), the model's text (``agentMessage``), each tool call it made
(``toolCall``) and each result (``toolResult``), and the notices a background subagent sends
its parent (``subagentReport``, ``subagentSettled``, when they arrive in the inbox; the user
message that later carries them into the conversation is not a second item). Bookkeeping
events (turns, inbox claims, descriptors, approvals) are no items. Every item carries the
``seq`` and session of the event it comes from, so a reader can go on from it.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs

from host.serialization import camel_case
from host.sessions.model import Event, InboxAccepted, MessageEvent

ItemType = Literal[
    "userMessage", "agentMessage", "toolCall", "toolResult", "subagentReport", "subagentSettled"
]

NOTICES: dict[str, ItemType] = {
    "subagent-report": "subagentReport",
    "subagent-settled": "subagentSettled",
}
"""Inbox source kinds that are subagent notices, and their item types."""


@camel_case
@attrs.frozen
class Item:
    """One transcript item. ``id`` is the message id (a tool call's id for ``toolCall``);
    ``seq`` and ``session_id`` place it in its log (None for an item still streaming).
    ``text`` is the message's text (a notice's whole text), ``name``/``arguments`` a tool
    call's, ``call_id`` the call a result answers, ``structured``/``is_error`` a result's,
    ``subagent_id`` who sent a notice or a parent's message."""

    type: ItemType
    id: str
    seq: int | None = None
    session_id: str | None = None
    text: str | None = None
    name: str | None = None
    arguments: Any = None
    call_id: str | None = None
    structured: Any = None
    is_error: bool = False
    subagent_id: str | None = None


def items_of(event: Event, session_id: str) -> list[Item]:
    """The items one stored event of ``session_id`` shows as (none for bookkeeping)."""
    body = event.body

    def item(type: ItemType, item_id: str, **fields: Any) -> Item:
        return Item(type, item_id, event.seq, session_id, **fields)

    if isinstance(body, InboxAccepted):
        kind = NOTICES.get(str((body.source or {}).get("kind")))
        if kind is None:
            return []
        sender = (body.source or {}).get("sender_session_id")
        return [item(kind, body.message_id, text=body.content, subagent_id=sender)]
    if not isinstance(body, MessageEvent):
        return []
    if body.role == "user":
        if str((body.source or {}).get("kind")) in NOTICES:
            return []  # shown when it arrived (InboxAccepted)
        sender = (body.source or {}).get("sender_session_id")
        return [item("userMessage", body.message_id, text=body.content, subagent_id=sender)]
    if body.role == "tool":
        return [
            item(
                "toolResult",
                body.message_id,
                text=body.content,
                call_id=body.tool_call_id,
                structured=body.structured,
                is_error=body.is_error,
            )
        ]
    said = [item("agentMessage", body.message_id, text=body.content)] if body.content else []
    calls = [item("toolCall", c.id, name=c.name, arguments=c.arguments) for c in body.tool_calls]
    return said + calls
