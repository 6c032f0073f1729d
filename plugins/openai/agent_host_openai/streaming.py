"""Server-sent events of a streamed chat completion, assembled into deltas and one response.

Pure functions and one small state machine, no I/O. ``SseDecoder`` turns the body's lines into
``data`` payloads; ``StreamAssembler`` turns each decoded ``chat.completion.chunk`` into host
deltas and, once the server sent ``[DONE]``, into the ``ModelResponse``. Anything that does not
have the documented shape is a ``ResponseShapeError`` naming what was wrong, so the caller can
fail the call in one line and no partial tool call ever reaches the session.
"""

from __future__ import annotations

import json
from typing import Any

import attrs

from agent_host_openai.convert import (
    ResponseShapeError,
    content_text,
    new_call_id,
    parse_arguments,
    parse_usage,
    stop_reason,
)
from host.api import (
    PREFIX_CHARS,
    ModelDelta,
    ModelResponse,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
    could_be_call,
)

DONE = "[DONE]"
"""The payload that ends an OpenAI event stream."""


class SseDecoder:
    """Splits event-stream lines into event payloads (the ``data`` lines of each event, joined
    with newlines). Comments (``:`` lines) and other fields (``event``, ``id``, ``retry``) are
    skipped, as the event-stream format says."""

    def __init__(self) -> None:
        self._data: list[str] = []

    def feed(self, line: str) -> str | None:
        """Take one line (without its line ending); return a payload when it ends an event."""
        if not line:
            return self.flush()
        if line.startswith(":"):
            return None
        field, _, value = line.partition(":")
        if field == "data":
            self._data.append(value[1:] if value.startswith(" ") else value)
        return None

    def flush(self) -> str | None:
        """The pending event's payload, if any (the stream's end also ends an event)."""
        if not self._data:
            return None
        payload, self._data = "\n".join(self._data), []
        return payload


@attrs.define
class _CallParts:
    id: str
    name: str
    arguments: list[str] = attrs.field(factory=list)

    def call(self) -> ToolCall:
        """The complete call: its argument pieces joined and parsed."""
        return ToolCall(self.id, self.name, parse_arguments("".join(self.arguments)))


class StreamAssembler:
    """Builds deltas and the final response from ``chat.completion.chunk`` payloads."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._calls: dict[int, _CallParts] = {}
        self._finish: str | None = None
        self._usage = Usage()
        self.done = False

    def feed(self, payload: str) -> list[ModelDelta]:
        """The deltas in one event payload; ``[DONE]`` marks the stream complete."""
        if self.done:
            raise ResponseShapeError("it sent data after [DONE]")
        if payload.strip() == DONE:
            self.done = True
            return []
        try:
            chunk = json.loads(payload)
        except ValueError:
            raise ResponseShapeError("an event's data is not JSON") from None
        if not isinstance(chunk, dict):
            raise ResponseShapeError("an event's data is not a JSON object")
        if "error" in chunk:
            raise ResponseShapeError(f"it reported an error mid-stream: {_error_text(chunk)}")
        if chunk.get("usage") is not None:
            self._usage = parse_usage(chunk["usage"])
        choices = chunk.get("choices")
        if not isinstance(choices, list):
            raise ResponseShapeError("a chunk has no choices list")
        if not choices:
            return []  # the usage chunk
        choice = choices[0]
        if not isinstance(choice, dict):
            raise ResponseShapeError("a chunk's choice is not an object")
        finish = choice.get("finish_reason")
        if isinstance(finish, str) and finish:
            self._finish = finish
        delta = choice.get("delta") or {}
        if not isinstance(delta, dict):
            raise ResponseShapeError("a chunk's delta is not an object")
        return self._deltas(delta)

    def _deltas(self, delta: dict[str, Any]) -> list[ModelDelta]:
        found: list[ModelDelta] = []
        text = content_text(delta.get("content"))
        if text:
            self._text.append(text)
            found.append(TextDelta(text))
        calls = delta.get("tool_calls") or []
        if not isinstance(calls, list):
            raise ResponseShapeError("a chunk's tool_calls is not a list")
        found.extend(self._call_delta(raw) for raw in calls)
        return found

    def _call_delta(self, raw: Any) -> ToolCallDelta:
        if not isinstance(raw, dict):
            raise ResponseShapeError("a tool-call delta is not an object")
        function = raw.get("function") or {}
        if not isinstance(function, dict):
            raise ResponseShapeError("a tool-call delta's function is not an object")
        index = raw.get("index")
        name = function.get("name")
        if not isinstance(index, int) or isinstance(index, bool):
            # servers that send each call whole leave out the index: a name starts a new call
            index = len(self._calls) if name else len(self._calls) - 1
        piece = function.get("arguments")
        piece = piece if isinstance(piece, str) else ("" if piece is None else json.dumps(piece))
        parts = self._calls.get(index)
        if parts is None:
            if not isinstance(name, str) or not name:
                raise ResponseShapeError(
                    f"a tool-call delta continues call {index}, which no delta started"
                )
            call_id = raw.get("id")
            if not isinstance(call_id, str) or not call_id:
                call_id = new_call_id()
            parts = self._calls[index] = _CallParts(call_id, name)
            parts.arguments.append(piece)
            return ToolCallDelta(index, call_id, name, piece)
        parts.arguments.append(piece)
        return ToolCallDelta(index, arguments=piece)

    @property
    def text(self) -> str:
        """The text received so far."""
        return "".join(self._text)

    def response(self) -> ModelResponse:
        """The assembled answer; a ``ResponseShapeError`` when the stream did not complete."""
        if not self.done:
            raise ResponseShapeError("the stream ended before [DONE]")
        calls = tuple(parts.call() for _, parts in sorted(self._calls.items()))
        return ModelResponse(
            text=self.text,
            tool_calls=calls,
            stop_reason=stop_reason(self._finish, bool(calls)),
            usage=self._usage,
        )


def _error_text(chunk: dict[str, Any]) -> str:
    error = chunk["error"]
    if isinstance(error, dict):
        error = error.get("message") or error.get("detail") or ""
    text = " ".join(str(error).split())
    return text[:200] if text else "no message"


class Holdback:
    """Holds back streamed text that may be tool calls written as text (``text_tool_calls =
    "json"``), so no JSON flickers on the screen: text is held while the content so far could
    still be calls (``could_be_call``) and released whole, then passed through, once it
    cannot. The verdict rests on the content's opening, so a long answer costs no rescans."""

    def __init__(self) -> None:
        self._held: list[str] = []
        self._head = ""  # the opening of the content, leading white space dropped
        self._holding = True

    def feed(self, text: str) -> str:
        """The text to hand out now for the arriving ``text`` ("" while it is held)."""
        if not self._holding:
            return text
        self._held.append(text)
        if len(self._head) < PREFIX_CHARS:
            self._head = (self._head + text[:PREFIX_CHARS]).lstrip()
            if not could_be_call(self._head):
                return self.release()
        return ""

    def release(self) -> str:
        """Everything held, handed out now; later text passes through."""
        self._holding = False
        held, self._held = "".join(self._held), []
        return held
