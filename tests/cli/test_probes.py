"""The probes of ``agent-host models check``, run against scripted and stub models."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from host.agents.models import ModelRequest, ModelResponse, StreamEvent, TextDelta
from host.agents.scripted import ScriptedModel, call, calls, say, tool_call
from host.cancel import CancelSignal
from host.cli import probes
from host.errors import HostError


def scripted(*entries: Any) -> ScriptedModel:
    model = ScriptedModel()
    model.script(probes.LABEL, *entries)
    return model


async def run_all(model: Any) -> dict[str, probes.ProbeResult]:
    return {name: await probes.run(name, model) for name in probes.PROBES}


async def test_a_model_that_does_everything_passes_every_probe():
    model = scripted(say("Hello!"), say("Hello, streamed."), call("add", a=17, b=25), say("42."))
    results = await run_all(model)
    assert [(r.name, r.ok, r.detail) for r in results.values()] == [
        ("plain", True, "Hello!"),
        ("stream", True, "Hello, streamed."),
        ("tools", True, "42."),
    ]
    model.assert_consumed()
    asked, answered = model.requests[2:]
    assert [tool.name for tool in asked.tools] == ["add"]
    turn, result = answered.messages[-2:]
    assert [(c.id, c.name, c.arguments) for c in turn.tool_calls] == [
        ("call_1", "add", {"a": 17, "b": 25})
    ]
    assert (result.role, result.content, result.tool_call_id) == ("tool", "42", "call_1")


class Plain:
    """A model with ``complete`` only."""

    async def complete(self, request: ModelRequest, *, signal: CancelSignal) -> ModelResponse:
        return say("plain only")


async def test_a_model_without_stream_fails_the_stream_probe_only_there():
    result = await probes.run("stream", Plain())
    assert (result.ok, result.line()) == (False, "stream  failed  the model does not stream")
    assert (await probes.run("plain", Plain())).ok


class Streams(Plain):
    """A model whose stream yields the given events."""

    def __init__(self, *events: StreamEvent) -> None:
        self.events = events

    async def stream(
        self, request: ModelRequest, *, signal: CancelSignal
    ) -> AsyncIterator[StreamEvent]:
        for event in self.events:
            yield event


@pytest.mark.parametrize(
    ("events", "why"),
    [
        ((say("whole"),), "the response came without any text delta before it"),
        ((TextDelta("cut"),), "the stream ended after 1 text delta(s) without its response"),
        ((TextDelta("x"), ModelResponse()), "the streamed answer had no text"),
    ],
)
async def test_a_stream_without_deltas_or_response_fails(events, why):
    result = await probes.run("stream", Streams(*events))
    assert (result.ok, result.detail) == (False, why)


@pytest.mark.parametrize(
    ("entries", "why"),
    [
        ([say("I cannot.")], "the model answered without calling add: 'I cannot.'"),
        (
            [call("subtract", a=1, b=2)],
            "the model made no usable call of add: unknown tool 'subtract'",
        ),
        (
            [call("add", a="17", b=25)],
            'the model made no usable call of add: add needs integers a and b, got {"a": "17", '
            '"b": 25}',
        ),
        (
            [call("add", a=17, b=25), call("add", a=42, b=0)],
            "the answer after the tool result had no text (it called add)",
        ),
        (
            [say('{"name": "add", "arguments": {"a": 17, "b": 25}}')],
            'the model wrote the call as text; set text_tool_calls = "json"',
        ),
        (
            [call("add", a=17, b=25), say('{"name": "add", "arguments": {"a": 17, "b": 25}}\n{"')],
            "the answer after the tool result is a call written as text, not an answer: "
            "'{\"name\": \"add\", \"arguments\": {\"a\": 17, \"b\": 25}} {\"'",
        ),
    ],
)
async def test_the_tools_probe_says_what_went_wrong(entries, why):
    result = await probes.run("tools", scripted(*entries))
    assert (result.ok, result.detail) == (False, why)


async def test_a_usable_add_call_among_others_gets_every_call_answered():
    model = scripted(calls(tool_call("lookup"), tool_call("add", a=1, b=2)), say("3"))
    assert (await probes.run("tools", model)).ok
    results = model.requests[-1].messages[-2:]
    assert [(m.content, m.is_error) for m in results] == [
        ("unknown tool 'lookup'", True),
        ("3", False),
    ]


async def test_a_failing_model_is_its_own_one_line_message():
    host_error = HostError("MODEL_REJECTED", "model server x rejected the request (400): no")
    result = await probes.run("plain", scripted(host_error))
    assert result.line() == "plain   failed  model server x rejected the request (400): no"
    result = await probes.run("tools", scripted(RuntimeError("boom\nmore")))
    assert result.line() == "tools   failed  RuntimeError: boom"


def test_an_ok_line_shows_the_time_and_the_first_60_characters_on_one_line():
    line = probes.ProbeResult("plain", True, "Hello\nthere " + "x" * 80, 0.4213).line()
    assert line == "plain   ok   (0.42 s) Hello there " + "x" * 48
