"""Chat-completions response bodies and stream chunks, as OpenAI-compatible servers send them."""

from __future__ import annotations

import json
import re
from typing import Any


def completion(
    text: str | None = "",
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: str | None = "stop",
    usage: dict[str, int] | None = None,
) -> dict[str, Any]:
    """A chat-completions response body."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
    }
    if usage is not None:
        body["usage"] = usage
    return body


def tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    """One OpenAI ``tool_calls`` entry (arguments as the raw string the server sends)."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def text_call(calls: list[tuple[str, dict[str, Any]]], wrap: str = "bare") -> str:
    """Tool calls written as text, as small local models answer (the server returns them as
    content): one ``{"name": …, "arguments": {…}}`` object (a list for several), ``bare``, in
    a ``fence`` (```` ```json ````), in ``tags`` (one ``<tool_call>`` block per call) or as
    ``lines`` (one object per line, however many)."""
    objects = [{"name": name, "arguments": arguments} for name, arguments in calls]
    if wrap == "tags":
        return "\n".join(f"<tool_call>\n{json.dumps(o)}\n</tool_call>" for o in objects)
    if wrap == "lines":
        return "".join(f"{json.dumps(o)}\n" for o in objects)
    text = json.dumps(objects[0] if len(objects) == 1 else objects)
    return f"```json\n{text}\n```" if wrap == "fence" else text


def stream_chunks(
    text: str = "",
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: str | None = "stop",
    usage: dict[str, int] | None = None,
    pieces: int | None = None,
) -> list[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects OpenAI and llama.cpp stream for one answer.

    The role first (with empty content), then ``text`` in ``pieces`` parts (by default one per
    word, each with the white space before it), then each tool call (``tool_call`` entries):
    its id and name, then its arguments in up to three fragments; then an empty delta with
    ``finish_reason``; then, when ``usage`` is given, a chunk with no choices and the usage.
    """
    chunks = [_chunk({"role": "assistant", "content": ""})]
    chunks.extend(_chunk({"content": part}) for part in _split_text(text, pieces))
    for index, call in enumerate(tool_calls or ()):
        function = call["function"]
        opening = {"name": function["name"], "arguments": ""}
        first = {"index": index, "id": call["id"], "type": "function", "function": opening}
        chunks.append(_chunk({"tool_calls": [first]}))
        chunks.extend(
            _chunk({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]})
            for fragment in _split_even(function["arguments"], 3)
        )
    chunks.append(_chunk({}, finish_reason))
    if usage is not None:
        chunks.append({**_chunk({}), "choices": [], "usage": usage})
    return chunks


def text_tokens(count: int) -> str:
    """A reply text of ``count`` words (``stream_chunks`` streams one word per chunk)."""
    return " ".join(f"w{index}" for index in range(count))


def sse(chunk: dict[str, Any]) -> str:
    """One server-sent event carrying ``chunk`` as JSON: ``data: <json>\\n\\n``."""
    return f"data: {json.dumps(chunk)}\n\n"


def _chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "test-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def _split_text(text: str, pieces: int | None) -> list[str]:
    """``text`` in ``pieces`` near-equal parts, or one part per word with its leading space."""
    if pieces is not None:
        return _split_even(text, pieces)
    return re.findall(r"\s*\S+|\s+$", text)


def _split_even(text: str, pieces: int) -> list[str]:
    """``text`` cut into at most ``pieces`` non-empty parts of near-equal length."""
    size = -(-len(text) // max(pieces, 1))
    return [text[start : start + size] for start in range(0, len(text), size)] if text else []
