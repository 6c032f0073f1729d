"""Host model requests to OpenAI chat-completions bodies, and completions back to responses.

Pure functions, no I/O. Tool-call arguments are read as JSON leniently where JSON allows it
(control characters such as literal newlines inside strings, as small local models write
them); still malformed arguments (not JSON, or JSON that is not an object) are kept as
``{MALFORMED_ARGUMENTS_KEY: "<raw text>"}``: every host tool rejects that unknown key, so the
model gets a clear ``invalid arguments for <tool>: …`` error result naming the key, instead of
the turn failing. With ``text_tool_calls = "json"``, an answer whose whole content is calls
written as text becomes those calls (``calls_from_text``).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import attrs

from host.api import (
    INTERRUPTED_TOOL_TEXT,
    MessageEvent,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolSpec,
    Usage,
    text_calls,
)

MALFORMED_ARGUMENTS_KEY = "_malformed_arguments"
"""The one key of the arguments of a tool call whose arguments were not a JSON object."""

STOP_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
}
"""OpenAI ``finish_reason`` → host ``stop_reason``; other values pass through unchanged."""


class ResponseShapeError(ValueError):
    """A completion whose JSON does not have the chat-completions shape."""


def request_body(
    model: str, request: ModelRequest, *, max_tokens: int | None = None, stream: bool = False
) -> dict[str, Any]:
    """The JSON body of ``POST /chat/completions`` for ``request`` on model ``model``.

    Offered tools go with ``tool_choice: "auto"`` (some servers, llama.cpp among them, read a
    missing ``tool_choice`` as ``none``); ``max_tokens`` is sent when given; a streamed call
    asks for the usage chunk too.
    """
    body: dict[str, Any] = {"model": model, "messages": to_messages(request)}
    if request.tools:
        body["tools"] = [tool_to_openai(spec) for spec in request.tools]
        body["tool_choice"] = "auto"
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


def to_messages(request: ModelRequest) -> list[dict[str, Any]]:
    """The system prompt (when there is one) as a system message, then every message.

    An assistant message's tool calls without a tool message before the next other message
    (a log written before the host gave calls cut off by a crash their result at resume) get
    the host's interrupted result there: servers refuse tool calls left without an answer.
    """
    messages: list[dict[str, Any]] = []
    if request.system_prompt:
        messages.append({"role": "system", "content": request.system_prompt})
    unanswered: list[str] = []
    for message in request.messages:
        if message.role == "tool":
            if message.tool_call_id in unanswered:
                unanswered.remove(message.tool_call_id)
        elif unanswered:
            messages.extend(_interrupted(call_id) for call_id in unanswered)
            unanswered = []
        messages.append(message_to_openai(message))
        if message.role == "assistant" and message.tool_calls:
            unanswered = [call.id for call in message.tool_calls]
    messages.extend(_interrupted(call_id) for call_id in unanswered)
    return messages


def _interrupted(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": INTERRUPTED_TOOL_TEXT}


def message_to_openai(message: MessageEvent) -> dict[str, Any]:
    """One host message as an OpenAI message (user, assistant with tool calls, or tool)."""
    if message.role == "tool":
        return {
            "role": "tool",
            "tool_call_id": message.tool_call_id or "",
            "content": message.content,
        }
    if message.role == "assistant" and message.tool_calls:
        return {  # content is a string even when empty: servers reject null and a missing key
            "role": "assistant",
            "content": message.content,
            "tool_calls": [tool_call_to_openai(call) for call in message.tool_calls],
        }
    return {"role": message.role, "content": message.content}


def tool_call_to_openai(call: ToolCall) -> dict[str, Any]:
    """A host tool call as an OpenAI ``tool_calls`` entry (arguments as a JSON string)."""
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
    }


def tool_to_openai(spec: ToolSpec) -> dict[str, Any]:
    """A tool as OpenAI's ``{"type": "function", "function": {...}}``."""
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.parameters,
        },
    }


def parse_arguments(raw: Any) -> dict[str, Any]:
    """Tool-call arguments as a dict: JSON-decoded, or the malformed raw text under one key.

    An absent or blank argument string means no arguments (``{}``).
    """
    if isinstance(raw, dict):
        return raw
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    text = raw if isinstance(raw, str) else json.dumps(raw)
    try:
        decoded = json.loads(text, strict=False)
    except (ValueError, RecursionError):
        return {MALFORMED_ARGUMENTS_KEY: text}
    if not isinstance(decoded, dict):
        return {MALFORMED_ARGUMENTS_KEY: text}
    return decoded


def calls_from_text(response: ModelResponse, request: ModelRequest) -> ModelResponse:
    """``response`` with its content read as the tool calls it wrote as text, when it has no
    native calls and its whole content is calls of offered tools (``host.agents.text_calls``);
    else ``response`` unchanged. The calls get generated ids and the content becomes empty,
    so they are logged and replayed exactly as native calls."""
    if response.tool_calls or not request.tools:
        return response
    found = text_calls.parse(response.text, {spec.name for spec in request.tools})
    if found is None:
        return response
    calls = tuple(ToolCall(new_call_id(), name, arguments) for name, arguments in found)
    stop = "tool_use" if response.stop_reason == "end_turn" else response.stop_reason
    return attrs.evolve(response, text="", tool_calls=calls, stop_reason=stop)


def new_call_id() -> str:
    """An id for a call the server gave none (some servers omit them; the host needs one)."""
    return f"call_{uuid.uuid4().hex}"


def parse_completion(data: Any) -> ModelResponse:
    """A chat-completions response body as a ``ModelResponse``; ``ResponseShapeError`` if not."""
    if not isinstance(data, dict):
        raise ResponseShapeError("the body is not a JSON object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ResponseShapeError("it has no choices")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise ResponseShapeError("its first choice has no message")
    tool_calls = tuple(_parse_tool_call(raw) for raw in message.get("tool_calls") or ())
    return ModelResponse(
        text=content_text(message.get("content")),
        tool_calls=tool_calls,
        stop_reason=stop_reason(choice.get("finish_reason"), bool(tool_calls)),
        usage=parse_usage(data.get("usage")),
    )


def stop_reason(finish: Any, has_tool_calls: bool) -> str:
    """The host stop reason for OpenAI's ``finish_reason`` (when it gave none: ``tool_use``
    if the answer has tool calls, else ``end_turn``)."""
    if isinstance(finish, str) and finish:
        return STOP_REASONS.get(finish, finish)
    return "tool_use" if has_tool_calls else "end_turn"


def _parse_tool_call(raw: Any) -> ToolCall:
    if not isinstance(raw, dict):
        raise ResponseShapeError("a tool call is not an object")
    function = raw.get("function")
    if not isinstance(function, dict):
        raise ResponseShapeError("a tool call has no function")
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise ResponseShapeError("a tool call has no function name")
    call_id = raw.get("id")
    if not isinstance(call_id, str) or not call_id:
        call_id = new_call_id()
    return ToolCall(id=call_id, name=name, arguments=parse_arguments(function.get("arguments")))


def content_text(content: Any) -> str:
    """A message's ``content`` as text: a string, the text parts of a list, or "" for null."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: keep the text ones
        return "".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    raise ResponseShapeError("its message content is neither text nor a list of parts")


def parse_usage(usage: Any) -> Usage:
    """OpenAI's ``usage`` object as host ``Usage`` (absent or malformed counts are 0)."""
    if not isinstance(usage, dict):
        return Usage()
    return Usage(
        input_tokens=_count(usage.get("prompt_tokens")),
        output_tokens=_count(usage.get("completion_tokens")),
    )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
