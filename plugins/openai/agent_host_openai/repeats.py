"""A small local model that repeats the call it was just answered instead of answering.

Seen with Qwen2.5-Coder 0.5B on ``llama-server --jinja`` (calls written as text): after a
tool's result it writes the same call again, whatever the prompt says, and an agent calls the
tool until ``max_steps``. Asked once more with the repeated call's result restated and no tools
offered, it answers with text. ``asked_again`` builds that request; the model plugin uses it
only for answers written as text (``text_tool_calls = "json"``): calls it read from text, or
text that opens with a call just answered (``{"name": "add", …} {"response": 42}``). Pure
functions, no I/O.
"""

from __future__ import annotations

import json

import attrs

from agent_host_openai.convert import new_call_id
from host.api import MessageEvent, ModelRequest, ModelResponse, ToolCall, text_calls

NOTE = (
    "{name} was already called with these arguments and {outcome}. Do not call it again; "
    "answer the user's question in plain text."
)
"""What the model is told in place of a repeated call's result (``outcome``: ``returned: <the
result>`` or ``failed: <the error>``)."""


def asked_again(request: ModelRequest, response: ModelResponse) -> ModelRequest | None:
    """The request to make instead of ``response``, when each of its calls — or the call its
    text opens with — repeats (same tool, same arguments) a call of the last assistant message
    of ``request`` answered by a result after it: the repeated calls with ``NOTE`` as their
    results, and no tools offered. None when ``response`` is anything else."""
    answered = _answered_calls(request.messages)
    calls = response.tool_calls or _opening_call(response.text, request)
    if answered is None or not calls:
        return None
    results = {_same(call): result for call, result in answered}
    if any(_same(call) not in results for call in calls):
        return None
    notes = tuple(
        MessageEvent(role="tool", content=_note(call, results[_same(call)]), tool_call_id=call.id)
        for call in calls
    )
    repeat = MessageEvent(role="assistant", content="", tool_calls=calls)
    return attrs.evolve(request, messages=(*request.messages, repeat, *notes), tools=())


def _opening_call(text: str, request: ModelRequest) -> tuple[ToolCall, ...]:
    found = text_calls.leading_call(text, {spec.name for spec in request.tools})
    return (ToolCall(new_call_id(), *found),) if found else ()


def _answered_calls(
    messages: tuple[MessageEvent, ...],
) -> list[tuple[ToolCall, MessageEvent]] | None:
    """The last assistant message's calls with their results, when the messages end with it
    followed by exactly one result for each of its calls; else None."""
    tail: list[MessageEvent] = []
    for message in reversed(messages):
        if message.role != "tool":
            break
        tail.append(message)
    at = len(messages) - len(tail) - 1
    if at < 0 or messages[at].role != "assistant" or not messages[at].tool_calls:
        return None
    by_id = {result.tool_call_id: result for result in tail}
    calls = messages[at].tool_calls
    if len(by_id) != len(tail) or set(by_id) != {call.id for call in calls}:
        return None
    return [(call, by_id[call.id]) for call in calls]


def _same(call: ToolCall) -> tuple[str, str]:
    return call.name, json.dumps(call.arguments, sort_keys=True)


def _note(call: ToolCall, result: MessageEvent) -> str:
    outcome = f"failed: {result.content}" if result.is_error else f"returned: {result.content}"
    return NOTE.format(name=call.name, outcome=outcome)
