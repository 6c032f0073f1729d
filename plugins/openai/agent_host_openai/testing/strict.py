"""What a strict chat-completions server refuses, and how it answers (as llama-cpp-python does)."""

from __future__ import annotations

import json
from typing import Any

REJECT_STATUS = 500
"""The status answered to a body ``validate_chat`` refuses (llama-cpp-python's server answers
500 to these, with the request-validation errors as the message)."""

ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
"""The message roles a chat-completions body may use."""

_MISSING = object()


def rejection_body(message: str) -> dict[str, Any]:
    """The JSON body answered with ``REJECT_STATUS`` to a body ``validate_chat`` refuses, in
    the shape llama-cpp-python's server sends (``"N validation errors: …"``)."""
    return {
        "error": {
            "message": f"1 validation error:\n  {message}",
            "type": "internal_server_error",
            "param": None,
            "code": None,
        }
    }


def validate_chat(body: Any) -> str | None:
    """Why a strict server refuses this ``POST /chat/completions`` body, or None if it is fine.

    Every message needs a known role and string ``content`` — an assistant message with
    ``tool_calls`` too (llama.cpp fails on a null one); a ``tool`` message's ``tool_call_id``
    must name a tool call of an earlier assistant message. ``tools`` without ``tool_choice``
    pass (llama.cpp then treats the choice as ``none``).
    """
    if not isinstance(body, dict):
        return "the body is not a JSON object"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: expected a non-empty list"
    call_ids: set[str] = set()
    for index, message in enumerate(messages):
        problem = _message_problem(message, call_ids)
        if problem is not None:
            return f"messages[{index}]{problem}"
    return None


def _message_problem(message: Any, call_ids: set[str]) -> str | None:
    """What is wrong with one message (the text after ``messages[i]``); adds its call ids."""
    if not isinstance(message, dict):
        return ": expected an object"
    role = message.get("role")
    if role not in ROLES:
        return f".role: unknown role {json.dumps(role)}"
    content = message.get("content", _MISSING)
    calls = message.get("tool_calls")
    if role == "assistant" and calls is not None:
        problem = _tool_calls_problem(calls, call_ids)
        if problem is not None:
            return problem
        if not isinstance(content, str):
            return f".content: {_kind(content)} in an assistant message with tool_calls"
    if not isinstance(content, str):
        return f".content: expected a string, got {_kind(content)}"
    if role == "tool":
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str) or call_id not in call_ids:
            return f".tool_call_id: {json.dumps(call_id)} answers no earlier assistant tool call"
    return None


def _tool_calls_problem(calls: Any, call_ids: set[str]) -> str | None:
    """What is wrong with an assistant's ``tool_calls``; adds their ids to ``call_ids``."""
    if not isinstance(calls, list) or not calls:
        return ".tool_calls: expected a non-empty list"
    for index, call in enumerate(calls):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(call.get("id"), str):
            return f".tool_calls[{index}]: expected an object with an id and a function"
        if not isinstance(function.get("name"), str):
            return f".tool_calls[{index}].function.name: expected a string"
        if not isinstance(function.get("arguments"), str):
            return f".tool_calls[{index}].function.arguments: expected a JSON string"
        call_ids.add(call["id"])
    return None


def _kind(value: Any) -> str:
    """How a validation message names a value that is not a string."""
    if value is _MISSING:
        return "missing"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "a list" if isinstance(value, list) else "an object"
