"""What local servers really send, over the strict loopback server: calls written as text,
literal newlines in arguments, answers cut at ``max_tokens``."""

from __future__ import annotations

import asyncio
import json
import logging

import agent_host_openai
import attrs
import pytest
from agent_host_openai import OpenAIModel
from agent_host_openai.repeats import NOTE
from agent_host_openai.testing import (
    Stream,
    completion,
    model_on,
    stream_chunks,
    text_call,
    tool_call,
)

from host import hookimpl
from host.agents.models import ModelRequest, ModelResponse, TextDelta, ToolSpec
from host.cancel import CancelSignal
from host.sessions.model import MessageEvent, TurnEnd
from host.tools import ToolExec, ToolResult, tool
from tests.support import plugin_row

PLUGIN = ("openai", agent_host_openai)
ADD = ToolSpec("add", "Add.", {"type": "object", "properties": {}})
ASK = ModelRequest("a", None, "", (MessageEvent(role="user", content="add 2 and 3"),), (ADD,))


@attrs.frozen
class CountArgs:
    text: str = attrs.field(metadata={"description": "The text."})


@tool("word_count", "Count the words of a text.", CountArgs)
async def word_count(args: CountArgs, exec: ToolExec) -> ToolResult:
    RAN.append(args.text)
    return ToolResult(f"{len(args.text.split())} words")


RAN: list[str] = []


class CountPlugin:
    @staticmethod
    @hookimpl
    def register_tools(register):
        register(word_count)


@pytest.fixture(autouse=True)
def no_runs():
    RAN.clear()


def host_config(server, **table):
    openai = {"base_url": server.url, "model": "test-model", "max_retries": 0, **table}
    return {"plugins": {"openai": openai, "models": {"default": "openai"}}}


async def turn(make_host, server, prompt="count the words of 'one two three'", **table):
    host = make_host(PLUGIN, ("count", CountPlugin), config=host_config(server, **table))
    agent = await host.services.get("agents").create(label="user")
    agent.followup(prompt)
    await asyncio.wait_for(agent.wait_idle(), 10)
    return agent


def bodies(agent, kind=MessageEvent):
    return [e.body for e in agent.session.events if isinstance(e.body, kind)]


def model(server, **options) -> OpenAIModel:
    return model_on(server.url, model="m", max_retries=0, **options)


async def collect(chosen, request=ASK):
    return [event async for event in chosen.stream(request, signal=CancelSignal())]


# -- calls written as text -------------------------------------------------------------------

COUNT = [("word_count", {"text": "one two three"})]


@pytest.mark.parametrize("wrap", ["bare", "fence", "tags"])
async def test_a_call_written_as_text_runs_and_is_replayed_as_a_native_call(
    make_host, server, wrap
):
    server.reply(completion(text_call(COUNT, wrap)), completion("It has 3 words."))
    agent = await turn(make_host, server, text_tool_calls="json")

    assert RAN == ["one two three"]
    _, call, result, answer = bodies(agent)
    assert (call.role, call.content, [c.name for c in call.tool_calls]) == (
        "assistant",
        "",
        ["word_count"],
    )
    call_id = call.tool_calls[0].id
    assert call_id.startswith("call_") and call.tool_calls[0].arguments == {"text": COUNT[0][1]["text"]}
    assert (result.tool_call_id, result.content) == (call_id, "3 words")
    assert answer.content == "It has 3 words."
    second = server.requests[1]
    assert second.rejected is None
    assert second.body["messages"][-2:] == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "word_count", "arguments": '{"text": "one two three"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call_id, "content": "3 words"},
    ]
    assert [end.stop_reason for end in bodies(agent, TurnEnd)] == ["completed"]


async def test_without_the_setting_a_call_written_as_text_stays_text(make_host, server):
    server.reply(completion(text_call(COUNT)))
    agent = await turn(make_host, server)
    assert RAN == []
    assert agent.last_answer == text_call(COUNT)


async def test_several_calls_written_as_a_list_all_run(make_host, server):
    calls = [("word_count", {"text": "a b"}), ("word_count", {"text": "c"})]
    server.reply(completion(text_call(calls)), completion("Done."))
    await turn(make_host, server, text_tool_calls="json")
    assert sorted(RAN) == ["a b", "c"]


async def test_several_calls_written_one_per_line_all_run(make_host, server):
    calls = [("word_count", {"text": "a b"}), ("word_count", {"text": "c"})]
    server.reply(completion(text_call(calls, "lines")), completion("Done."))
    await turn(make_host, server, text_tool_calls="json")
    assert sorted(RAN) == ["a b", "c"]


def test_the_setting_is_checked(make_host):
    table = {"text_tool_calls": "yes"}
    host = make_host(PLUGIN, config={"plugins": {"openai": table}})
    assert plugin_row(host, "openai")["error"] == (
        "ConfigError: [plugins.openai] text_tool_calls: must be \"off\" or \"json\", got 'yes'"
    )


async def test_a_streamed_call_written_as_text_never_reaches_the_stream(server):
    server.reply(Stream(stream_chunks(text_call([("add", {"a": 2, "b": 3})]), pieces=9)))
    events = await collect(model(server, text_tool_calls="json"))

    [response] = events
    assert isinstance(response, ModelResponse)
    assert (response.text, response.stop_reason) == ("", "tool_use")
    assert [(c.name, c.arguments) for c in response.tool_calls] == [("add", {"a": 2, "b": 3})]


async def test_streamed_text_is_released_once_it_cannot_be_a_call(server):
    server.reply(Stream(stream_chunks("  The sum is 5.")))
    events = await collect(model(server, text_tool_calls="json"))
    assert events[:-1] == [TextDelta("  The"), TextDelta(" sum"), TextDelta(" is"), TextDelta(" 5.")]
    assert events[-1].text == "  The sum is 5."


async def test_held_text_that_is_no_call_is_released_before_the_response(server):
    text = '{"name": "subtract", "arguments": {"a": 2}}'
    server.reply(Stream(stream_chunks(text, pieces=4)))
    events = await collect(model(server, text_tool_calls="json"))
    assert events == [TextDelta(text), ModelResponse(text, (), "end_turn")]


BAD_INPUT = [
    pytest.param('{"name": "rm", "arguments": {"path": "/"}}', id="a tool not offered"),
    pytest.param('{"name": "add", "arguments": [2, 3]}', id="non-object arguments"),
    pytest.param('{"name": "add", "arguments": "{\\"a\\": 2}"}', id="arguments as a string"),
    pytest.param('[{"name": "add", "arguments": {"a": 2}}, 7]', id="a mixed array"),
    pytest.param("[]", id="an empty array"),
    pytest.param('{"name": "add", "arguments": {}}\n{"words": 5}', id="a call, then no call"),
    pytest.param('{"name": "add", "arguments": {}} {', id="a call, then a torn object"),
    pytest.param('<tool_call>{"name": "add", "arguments": {}}</tool_call> and', id="text after"),
    pytest.param("{" * 10_000_000, id="10 MB of {"),
    pytest.param("[" * 10_000_000, id="10 MB of ["),
]


@pytest.mark.parametrize("text", BAD_INPUT)
async def test_what_only_looks_like_a_call_stays_text(server, text):
    server.reply(Stream(stream_chunks(text, pieces=50)), completion(text))
    chosen = model(server, text_tool_calls="json")
    events = await asyncio.wait_for(collect(chosen), 20)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == text
    assert (events[-1].text, events[-1].tool_calls) == (text, ())
    whole = await asyncio.wait_for(chosen.complete(ASK, signal=CancelSignal()), 20)
    assert (whole.text, whole.tool_calls) == (text, ())


async def test_a_call_of_a_tool_not_offered_never_runs(make_host, server):
    server.reply(completion('{"name": "rm", "arguments": {"text": "x"}}'))
    agent = await turn(make_host, server, text_tool_calls="json")
    assert RAN == [] and [m.role for m in bodies(agent)] == ["user", "assistant"]


# -- arguments as real servers send them -----------------------------------------------------


async def test_literal_newlines_inside_argument_strings_are_read(make_host, server):
    raw = '{"text": "one\ntwo\tthree"}'  # control characters inside a JSON string
    with pytest.raises(ValueError):
        json.loads(raw)
    server.reply(
        completion(None, [tool_call("c1", "word_count", raw)], "tool_calls"),
        completion("Three."),
    )
    await turn(make_host, server)
    assert RAN == ["one\ntwo\tthree"]


async def test_still_invalid_arguments_keep_the_malformed_path(make_host, server):
    server.reply(
        completion(None, [tool_call("c1", "word_count", '{"text": "one\n')], "tool_calls"),
        completion("Sorry."),
    )
    agent = await turn(make_host, server)
    assert RAN == []
    result = bodies(agent)[2]
    assert (result.content, result.is_error) == (
        "invalid arguments for word_count: text: required; _malformed_arguments: unknown key",
        True,
    )


# -- truncation ------------------------------------------------------------------------------


async def test_an_answer_cut_at_max_tokens_ends_the_turn_so(make_host, server):
    server.reply(Stream(stream_chunks("The answer is long and", finish_reason="length")))
    agent = await turn(make_host, server)
    [end] = bodies(agent, TurnEnd)
    assert (end.stop_reason, end.error) == ("max_tokens", None)
    assert agent.last_answer == "The answer is long and"


async def test_a_call_cut_mid_arguments_is_never_run(make_host, server):
    cut = tool_call("c1", "word_count", '{"text": "one two')
    server.reply(Stream(stream_chunks("", [cut], finish_reason="length")))
    agent = await turn(make_host, server)
    assert RAN == []
    _, call, result = bodies(agent)
    assert [c.id for c in call.tool_calls] == ["c1"]
    assert (result.tool_call_id, result.content, result.is_error) == (
        "c1",
        "tool call was not run: the answer was cut at max_tokens",
        True,
    )
    assert [end.stop_reason for end in bodies(agent, TurnEnd)] == ["max_tokens"]
    assert len(server.requests) == 1


async def test_a_complete_call_in_a_cut_answer_is_not_run_either(make_host, server):
    server.reply(completion(None, [tool_call("c1", "word_count", '{"text": "a"}')], "length"))
    agent = await turn(make_host, server)
    assert RAN == []
    assert [end.stop_reason for end in bodies(agent, TurnEnd)] == ["max_tokens"]


# -- a call repeated instead of an answer --------------------------------------------------
REPEATED = "the model repeated its call of word_count instead of answering; asked again without tools"


def note(result: str) -> str:
    return NOTE.format(name="word_count", outcome=f"returned: {result}")


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("wrap", ["bare", "lines", "restated"])
async def test_a_repeated_call_is_not_run_again_and_the_model_is_asked_for_text(
    make_host, server, caplog, stream, wrap
):
    again = {
        "bare": text_call(COUNT),
        "lines": text_call(COUNT * 2, "lines"),
        "restated": text_call(COUNT) + ' {"response": "3 words"}',
    }[wrap]
    replies = [text_call(COUNT), again, "It has 3 words."]
    server.reply(*[Stream(stream_chunks(r)) if stream else completion(r) for r in replies])
    with caplog.at_level(logging.WARNING):
        agent = await turn(make_host, server, text_tool_calls="json", stream=stream)

    assert RAN == ["one two three"]
    assert [(m.role, m.content) for m in bodies(agent)] == [
        ("user", "count the words of 'one two three'"),
        ("assistant", ""),
        ("tool", "3 words"),
        ("assistant", "It has 3 words."),
    ]
    assert [end.stop_reason for end in bodies(agent, TurnEnd)] == ["completed"]
    third = server.requests[2].body
    assert "tools" not in third and third["messages"][-1]["content"] == note("3 words")
    repeat = third["messages"][-1 - len(again.splitlines()) if wrap == "lines" else -2]
    assert [c["function"]["name"] for c in repeat["tool_calls"]] == ["word_count"] * (
        2 if wrap == "lines" else 1
    )
    assert caplog.messages.count(REPEATED) == 1


async def test_a_call_with_other_arguments_runs(make_host, server):
    other = [("word_count", {"text": "four five"})]
    server.reply(
        completion(text_call(COUNT)), completion(text_call(other)), completion("3 and 2 words.")
    )
    agent = await turn(make_host, server, text_tool_calls="json")
    assert RAN == ["one two three", "four five"]
    assert agent.last_answer == "3 and 2 words."
    assert all("tools" in request.body for request in server.requests)


async def test_a_native_repeated_call_runs_again(make_host, server):
    arguments = '{"text": "one two three"}'
    server.reply(
        completion(tool_calls=[tool_call("c1", "word_count", arguments)]),
        completion(tool_calls=[tool_call("c2", "word_count", arguments)]),
        completion("3."),
    )
    await turn(make_host, server, text_tool_calls="json")
    assert RAN == ["one two three"] * 2
