"""Three probes of a model through the host's model protocol, for ``agent-host models check``.

* ``plain``: one short ``complete``; ok when the answer has text.
* ``stream``: the same through ``stream``; ok when at least one text delta arrived and the
  stream ended with its response. A model without ``stream`` fails it.
* ``tools``: a tool-call round trip with one ``add`` tool (integers ``a`` and ``b``): ok when
  the model asks for ``add`` with integer arguments, and, given the sum as a ``tool``
  message, answers with text. Both calls go the way an agent's do: streamed when the model
  streams. A call written as text (``host.agents.text_calls``) and a server that cannot
  answer with text while tools are offered are named as such, with what to do; an "answer"
  after the result that is again a call written as text is no answer.

Every request asks for a short answer (``max_tokens``), so a model that rambles cannot keep
the check waiting for minutes.

Each probe is a function of the model returning the answer's text or raising ``ProbeFailed``;
``run`` times one and turns any failure into its one-line message.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Awaitable, Callable, Sequence

import attrs

from host.agents import text_calls
from host.agents.models import Model, ModelRequest, ModelResponse, TextDelta, ToolSpec, streams
from host.cancel import CancelSignal
from host.errors import HostError
from host.plugins.lifecycle import describe_error
from host.sessions.model import MessageEvent, ToolCall

Probe = Callable[[Model], Awaitable[str]]

LABEL = "models-check"
"""The agent label of the probes' requests (a scripted model can be scripted for it)."""

ANSWER_CHARACTERS = 60
"""How much of an answer a result line shows."""

MAX_TOKENS = 96
"""The longest answer a probe asks for."""

PLAIN_PROMPT = "Reply with a short greeting of at most five words."
TOOLS_PROMPT = "Use the add tool to add 17 and 25, then tell me the sum in one short sentence."
ADD = ToolSpec(
    "add",
    "Add two integers and return their sum.",
    {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    },
)


WRITTEN_AS_TEXT = 'the model wrote the call as text; set text_tool_calls = "json"'
NO_TEXT_WITH_TOOLS = (
    "the server cannot answer with text while tools are offered (after the tool result it "
    "sent {what}): use another chat format (llama-cpp-python's chatml-function-calling "
    "cannot) or another server (llama-server --jinja)"
)
_STUB = re.compile(r"\s*functions\.[\w-]+:")
"""The ``functions.<name>:`` stub such a server sends in place of an answer."""


class ProbeFailed(Exception):
    """A probe's verdict that the model misbehaved; the message is one line."""


@attrs.frozen
class ProbeResult:
    """How one probe went: ok with the answer, or failed with why; ``seconds`` it took."""

    name: str
    ok: bool
    detail: str
    seconds: float = 0.0

    def line(self) -> str:
        """``plain   ok   (0.42 s) Hello there`` or ``tools   failed  <why>``."""
        if self.ok:
            answer = " ".join(self.detail.split())[:ANSWER_CHARACTERS]
            return f"{self.name:<8}ok   ({self.seconds:.2f} s) {answer}".rstrip()
        return f"{self.name:<8}failed  {self.detail}"


def request(
    prompt: str, *, tools: tuple[ToolSpec, ...] = (), after: Sequence[MessageEvent] = ()
) -> ModelRequest:
    """A probe's request: the user's ``prompt``, then the messages ``after`` it."""
    messages = (MessageEvent(role="user", content=prompt), *after)
    return ModelRequest(
        LABEL, LABEL, "You are being tested. Be brief.", messages, tools, max_tokens=MAX_TOKENS
    )


def _text_of(response: ModelResponse, what: str) -> str:
    """The response's text; ``ProbeFailed`` naming ``what`` when there is none."""
    if response.text.strip():
        return response.text
    called = ", ".join(call.name for call in response.tool_calls)
    instead = f" (it called {called})" if called else ""
    raise ProbeFailed(f"{what} had no text{instead}")


async def plain(model: Model) -> str:
    """One ``complete``; its text."""
    response = await model.complete(request(PLAIN_PROMPT), signal=CancelSignal())
    return _text_of(response, "the answer")


async def stream(model: Model) -> str:
    """One ``stream``: at least one text delta, then the response; the response's text."""
    if not streams(model):
        raise ProbeFailed("the model does not stream")
    deltas = 0
    events = model.stream(request(PLAIN_PROMPT), signal=CancelSignal())  # type: ignore[attr-defined]
    async with contextlib.aclosing(events):
        async for event in events:
            if isinstance(event, ModelResponse):
                if not deltas:
                    raise ProbeFailed("the response came without any text delta before it")
                return _text_of(event, "the streamed answer")
            if isinstance(event, TextDelta) and event.text:
                deltas += 1
    raise ProbeFailed(f"the stream ended after {deltas} text delta(s) without its response")


async def _ask(model: Model, asked: ModelRequest) -> ModelResponse:
    """The model's response to ``asked``, through ``stream`` when the model streams."""
    if not streams(model):
        return await model.complete(asked, signal=CancelSignal())
    events = model.stream(asked, signal=CancelSignal())  # type: ignore[attr-defined]
    async with contextlib.aclosing(events):
        async for event in events:
            if isinstance(event, ModelResponse):
                return event
    raise ProbeFailed("the stream ended without its response")


async def tools(model: Model) -> str:
    """Offer ``add``, answer its call with the sum, return the model's final text."""
    asked = await _ask(model, request(TOOLS_PROMPT, tools=(ADD,)))
    results = [_add_result(call) for call in asked.tool_calls]
    if not any(not result.is_error for result in results):
        raise ProbeFailed(_no_add_call(asked))
    turn = MessageEvent(role="assistant", content=asked.text, tool_calls=asked.tool_calls)
    answer = await _ask(model, request(TOOLS_PROMPT, tools=(ADD,), after=(turn, *results)))
    _no_text_with_tools(model, answer)
    text = _text_of(answer, "the answer after the tool result")
    if text_calls.could_be_call(text):  # a small model repeating its call is no answer
        shown = " ".join(text.split())[:ANSWER_CHARACTERS]
        raise ProbeFailed(
            f"the answer after the tool result is a call written as text, not an answer: {shown!r}"
        )
    return text


def _no_text_with_tools(model: Model, answer: ModelResponse) -> None:
    """``ProbeFailed`` for the empty answer or ``functions.<name>:`` stub of a server that
    cannot answer with text while tools are offered: one that also refused to stream them
    (llama-cpp-python's chatml-function-calling generates under a grammar that allows only
    a call or the end)."""
    if getattr(model, "stream_tools", True) is not False:
        return
    if not answer.text.strip():
        what = "a call of add again" if answer.tool_calls else "an empty answer"
    elif _STUB.match(answer.text):
        what = f"the stub {' '.join(answer.text.split())[:ANSWER_CHARACTERS]!r}"
    else:
        return
    raise ProbeFailed(NO_TEXT_WITH_TOOLS.format(what=what))


def _add_result(call: ToolCall) -> MessageEvent:
    """The tool message answering ``call``: the sum, or an error for anything else."""
    a, b = call.arguments.get("a"), call.arguments.get("b")
    if call.name != ADD.name:
        text = f"unknown tool {call.name!r}"
    elif type(a) is not int or type(b) is not int:
        text = f"add needs integers a and b, got {json.dumps(call.arguments)[:100]}"
    else:
        return MessageEvent(role="tool", content=str(a + b), tool_call_id=call.id)
    return MessageEvent(role="tool", content=text, tool_call_id=call.id, is_error=True)


def _no_add_call(response: ModelResponse) -> str:
    """Why ``response`` is not a usable call of ``add``."""
    if not response.tool_calls and text_calls.parse(response.text, {ADD.name}) is not None:
        return WRITTEN_AS_TEXT
    if not response.tool_calls:
        answer = " ".join(response.text.split())[:ANSWER_CHARACTERS]
        return f"the model answered without calling add: {answer!r}"
    problems = [_add_result(call).content for call in response.tool_calls]
    return "the model made no usable call of add: " + "; ".join(problems)


PROBES: dict[str, Probe] = {"plain": plain, "stream": stream, "tools": tools}
"""The probes ``models check`` runs, in order."""


async def run(
    name: str, model: Model, clock: Callable[[], float] = time.perf_counter
) -> ProbeResult:
    """Run probe ``name`` against ``model``; a failure of any kind is one line."""
    started = clock()
    try:
        answer = await PROBES[name](model)
    except ProbeFailed as failure:
        return ProbeResult(name, False, str(failure))
    except HostError as error:  # the model's own one-line failure, e.g. the server's words
        return ProbeResult(name, False, error.message)
    except Exception as error:
        return ProbeResult(name, False, describe_error(error))
    return ProbeResult(name, True, answer, clock() - started)
