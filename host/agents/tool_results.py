"""What a tool call's result looks like in the log: the tool message that answers a call, the
text of a call cut short, a result sized for a model, which calls of a step are still
unanswered, and which a resume answers from the user's decision."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from host.errors import ConfigError
from host.sessions.model import ApprovalDecided, ApprovalRequested, Event, MessageEvent, ToolCall
from host.settings import DEFAULT_MAX_RESULT_CHARS
from host.tools.tool import ToolResult

INTERRUPTED_TOOL_TEXT = "tool call was interrupted before it finished"
CUT_TOOL_TEXT = "tool call was not run: the answer was cut at max_tokens"
"""The result of a call in an answer cut at the model's token limit (its arguments may be
cut short too, so it never runs)."""


def cut_note(total: int, kept: int) -> str:
    """The last line of a result cut for the model (docs/plugin-guide.md, word for word)."""
    return f"[result cut: {total:,} characters in all, the first {kept:,} shown]"


def sized(result: ToolResult, limit: int) -> ToolResult:
    """``result`` as the model and the log get it: text over ``limit`` characters keeps its
    first ``limit`` and gains a last line saying how much there was (``cut_note``); a
    structured part whose JSON is over ``limit`` characters is dropped. ``0``: no limit."""
    if limit <= 0:
        return result
    text, structured = result.text, result.structured
    if len(text) > limit:
        text = f"{text[:limit]}\n{cut_note(len(result.text), limit)}"
    if structured is not None and _json_length(structured) > limit:
        structured = None
    if text is result.text and structured is result.structured:
        return result
    return attrs.evolve(result, text=text, structured=structured)


def _json_length(value: Any) -> int:
    try:
        return len(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError):
        return len(str(value))


def max_result_chars(config: Mapping[str, Any] | None) -> int:
    """``[tools] max_result_chars`` of a parsed configuration (``DEFAULT_MAX_RESULT_CHARS``
    when absent); ``ConfigError`` in one line for anything but a whole number >= 0."""
    table = (config or {}).get("tools", {})
    if not isinstance(table, Mapping):
        raise ConfigError("[tools] must be a table")
    unknown = sorted(set(table) - {"max_result_chars"})
    if unknown:
        raise ConfigError(f'[tools]: unknown key "{unknown[0]}" (known: max_result_chars)')
    value = table.get("max_result_chars", DEFAULT_MAX_RESULT_CHARS)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(
            f"[tools] max_result_chars must be a whole number of characters (0: no limit), "
            f"not {value!r}"
        )
    return value


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
