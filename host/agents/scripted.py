"""The embedded keyless model: deterministic scripted answers, every request recorded.

Scripts are chosen per request by the agent's ``label`` or by a predicate on the request
(agent ids are random, so tests match on labels). Each script is a queue; an entry is a
``ModelResponse``, an exception (raised), or a function of the request returning either
(sync or async — an async function can wait on a future to hold a call "in flight").

When several scripts match, the first registered one that still has entries answers. A request
no script answers gets the **default answer**: a response with no tool calls whose text is
``DEFAULT_PREFIX`` followed by the content of the last user message (or nothing).

Tool calls without an id (as built by ``call``/``tool_call``) get ``call_1``, ``call_2``, … in
the order this model hands them out, so transcripts are deterministic.

The model streams: ``stream`` hands out the same answer word by word (each word with the
white space before it), then one delta per tool call, then the response. It does not yield to
the event loop between deltas, so a scripted run interleaves its agents exactly as it would
without streaming (an entry that is an async function can still hold a call in flight).
"""

from __future__ import annotations

import inspect
import json
import re
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import attrs

from host.agents.models import (
    ModelRequest,
    ModelResponse,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    Usage,
)
from host.cancel import CancelSignal
from host.sessions.model import ToolCall

DEFAULT_PREFIX = "scripted reply: "

ScriptedReply = ModelResponse | BaseException
ScriptFn = Callable[[ModelRequest], "ScriptedReply | Awaitable[ScriptedReply]"]
Entry = ScriptedReply | ScriptFn
Matcher = str | Callable[[ModelRequest], bool]


def say(text: str) -> ModelResponse:
    """A final answer: ``text`` and no tool calls."""
    return ModelResponse(text=text, stop_reason="end_turn")


def tool_call(name: str, /, **arguments: Any) -> ToolCall:
    """One tool call; the scripted model gives it an id when it is handed out."""
    return ToolCall(id="", name=name, arguments=arguments)


def call(name: str, /, **arguments: Any) -> ModelResponse:
    """A response asking for a single call of tool ``name`` with ``arguments``."""
    return calls(tool_call(name, **arguments))


def calls(*tool_calls: ToolCall, text: str = "") -> ModelResponse:
    """A response asking for several tool calls in one batch (optionally with some text)."""
    return ModelResponse(text=text, tool_calls=tuple(tool_calls), stop_reason="tool_use")


def default_answer(request: ModelRequest) -> ModelResponse:
    """The documented answer to an unscripted request (see module docstring)."""
    last = request.last_user_message()
    return say(DEFAULT_PREFIX + (last.content if last else ""))


@attrs.define
class Script:
    """A queue of entries served to the requests its matcher accepts."""

    matcher: Matcher
    entries: deque[Entry]

    def matches(self, request: ModelRequest) -> bool:
        """True if this script answers ``request`` (label equality or the predicate)."""
        if isinstance(self.matcher, str):
            return request.label == self.matcher
        return bool(self.matcher(request))

    def describe(self) -> str:
        """How the script is named in error messages."""
        if isinstance(self.matcher, str):
            return f"label {self.matcher!r}"
        return f"predicate {getattr(self.matcher, '__name__', repr(self.matcher))}"


class ScriptedModel:
    """A deterministic ``Model``: scripted answers, recorded requests, a documented default."""

    def __init__(self, default: Callable[[ModelRequest], ModelResponse] = default_answer) -> None:
        self.requests: list[ModelRequest] = []
        self._scripts: list[Script] = []
        self._default = default
        self._next_call = 0

    def script(self, matcher: Matcher, *entries: Entry) -> Script:
        """Queue ``entries`` for requests whose label equals ``matcher`` (or it returns True)."""
        found = Script(matcher, deque(entries))
        self._scripts.append(found)
        return found

    def answer_unscripted(self, default: Callable[[ModelRequest], ModelResponse]) -> None:
        """Replace the answer given to requests no script matches."""
        self._default = default

    def requests_for(self, label: str) -> list[ModelRequest]:
        """The recorded requests of agents labelled ``label``, in order."""
        return [request for request in self.requests if request.label == label]

    def assert_consumed(self) -> None:
        """Raise ``AssertionError`` if any script still has entries left."""
        left = [f"{s.describe()}: {len(s.entries)} left" for s in self._scripts if s.entries]
        if left:
            raise AssertionError("scripted model has unconsumed entries: " + "; ".join(left))

    async def stream(
        self, request: ModelRequest, *, signal: CancelSignal
    ) -> AsyncIterator[StreamEvent]:
        """``complete``'s answer as deltas: the words of its text, one delta per tool call, then
        the response itself."""
        response = await self.complete(request, signal=signal)
        for word in words(response.text):
            yield TextDelta(word)
        for index, each in enumerate(response.tool_calls):
            yield ToolCallDelta(index, each.id, each.name, json.dumps(each.arguments))
        yield response

    async def complete(self, request: ModelRequest, *, signal: CancelSignal) -> ModelResponse:
        """Record ``request`` and answer it from the first matching script with entries left."""
        self.requests.append(request)
        entry = self._next_entry(request)
        reply: Any = self._default(request) if entry is None else entry
        if callable(reply) and not isinstance(reply, ModelResponse | BaseException):
            reply = reply(request)
            if inspect.isawaitable(reply):
                reply = await reply
        if isinstance(reply, BaseException):
            raise reply
        if not isinstance(reply, ModelResponse):
            raise TypeError(f"scripted entry produced {reply!r}, not a ModelResponse")
        return self._finish(request, reply)

    def _next_entry(self, request: ModelRequest) -> Entry | None:
        for found in self._scripts:
            if found.entries and found.matches(request):
                return found.entries.popleft()
        return None

    def _finish(self, request: ModelRequest, response: ModelResponse) -> ModelResponse:
        """Number id-less tool calls and fill in a deterministic usage estimate."""
        numbered = []
        for each in response.tool_calls:
            if not each.id:
                self._next_call += 1
                each = attrs.evolve(each, id=f"call_{self._next_call}")
            numbered.append(each)
        usage = response.usage
        if usage == Usage():
            chars = len(request.system_prompt) + sum(len(m.content) for m in request.messages)
            usage = Usage(input_tokens=chars // 4, output_tokens=len(response.text) // 4)
        return attrs.evolve(response, tool_calls=tuple(numbered), usage=usage)


_WORD = re.compile(r"\s*\S+|\s+$")


def words(text: str) -> list[str]:
    """``text`` cut before each word (white space stays with the word after it); they join
    back to ``text``."""
    return _WORD.findall(text)
