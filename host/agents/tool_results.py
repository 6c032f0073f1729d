"""What a tool call's result looks like in the log: the tool message that answers a call, the
text of a call cut short, which calls of a step are still unanswered, and which a resume answers
from the user's decision."""

from __future__ import annotations

from collections.abc import Sequence

from host.sessions.model import ApprovalDecided, ApprovalRequested, Event, MessageEvent, ToolCall
from host.tools.tool import ToolResult

INTERRUPTED_TOOL_TEXT = "tool call was interrupted before it finished"
CUT_TOOL_TEXT = "tool call was not run: the answer was cut at max_tokens"
"""The result of a call in an answer cut at the model's token limit (its arguments may be
cut short too, so it never runs)."""


def unanswered(events: Sequence[Event], calls: Sequence[ToolCall]) -> list[ToolCall]:
    """The ``calls`` with no tool message in ``events`` after the assistant message that
    made them (searched from the end)."""
    wanted = {call.id for call in calls}
    answered: set[str] = set()
    for event in reversed(events):
        body = event.body
        if not isinstance(body, MessageEvent):
            continue
        if body.role == "tool" and body.tool_call_id in wanted:
            answered.add(body.tool_call_id)
        elif body.role == "assistant" and any(call.id in wanted for call in body.tool_calls):
            break
    return [call for call in calls if call.id not in answered]


def left_to_resume(events: Sequence[Event]) -> set[str]:
    """The tool call ids whose result, when the agent resumes, comes from their approval
    request (or ``ask_user`` question) in ``events``: one with no decision yet (asked again),
    or denied or answered (the denial, the answer). Not one approved or cancelled."""
    calls: dict[str, str] = {}
    for event in events:
        body = event.body
        if isinstance(body, ApprovalRequested):
            calls[body.request_id] = body.tool_call_id
        elif isinstance(body, ApprovalDecided) and body.decision not in ("denied", "answered"):
            calls.pop(body.request_id, None)
    return set(calls.values())


def tool_message(call: ToolCall, result: ToolResult) -> MessageEvent:
    """The tool message that gives ``call`` its ``result``."""
    return MessageEvent(
        role="tool",
        content=result.text,
        tool_call_id=call.id,
        is_error=result.is_error,
        structured=result.structured,
    )
