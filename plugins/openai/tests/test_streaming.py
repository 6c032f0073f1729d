"""Streaming over a real loopback server: deltas, assembly, bad streams, pooling, interrupts."""

from __future__ import annotations

import asyncio
import json

import pytest
from agent_host_openai import OpenAIModelError
from agent_host_openai.testing import Reply, Stream, completion, stream_chunks, tool_call
from agent_host_openai.testing import model_on as make_model

from host.agents.models import (
    ModelRequest,
    ModelResponse,
    TextDelta,
    ToolCallDelta,
    ToolSpec,
    Usage,
    streams,
)
from host.cancel import CancelSignal
from host.sessions.model import MessageEvent, ToolCall, TurnEnd
from tests.support import soon


def request(*messages):
    messages = messages or (MessageEvent(role="user", content="hi"),)
    return ModelRequest(agent_id="a", label=None, system_prompt="", messages=messages)


WITH_TOOLS = ModelRequest(
    "a",
    None,
    "",
    (MessageEvent(role="user", content="hi"),),
    (ToolSpec("echo", "Echo.", {"type": "object", "properties": {}}),),
)


async def collect(model, req=None, signal=None):
    return [
        event async for event in model.stream(req or request(), signal=signal or CancelSignal())
    ]


async def stream_fails(model, req=None):
    with pytest.raises(OpenAIModelError) as caught:
        await collect(model, req)
    assert "\n" not in caught.value.message
    return caught.value


# -- the happy paths -------------------------------------------------------------------------


async def test_text_streams_word_by_word_and_asks_for_usage(server):
    usage = {"prompt_tokens": 9, "completion_tokens": 3}
    server.reply(Stream(stream_chunks("Hello there, friend.", usage=usage)))
    events = await collect(make_model(server.url))

    assert events[:-1] == [TextDelta("Hello"), TextDelta(" there,"), TextDelta(" friend.")]
    assert events[-1] == ModelResponse("Hello there, friend.", (), "end_turn", Usage(9, 3))
    [sent] = server.requests
    assert sent.body["stream"] is True
    assert sent.body["stream_options"] == {"include_usage": True}
    assert sent.headers["accept"] == "text/event-stream"


async def test_tool_call_deltas_assemble_into_calls(server):
    calls = [
        tool_call("call_a", "echo", '{"text": "ping"}'),
        tool_call("call_b", "echo", '{"text": "pong"}'),
    ]
    server.reply(Stream(stream_chunks("Let me check.", calls, finish_reason="tool_calls")))
    events = await collect(make_model(server.url))

    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert (deltas[0].index, deltas[0].id, deltas[0].name) == (0, "call_a", "echo")
    assert "".join(d.arguments for d in deltas if d.index == 0) == '{"text": "ping"}'
    assert all(
        d.id is None and d.name is None for d in deltas if d not in (deltas[0],) and d.arguments
    )
    response = events[-1]
    assert response.text == "Let me check."
    assert response.tool_calls == (
        ToolCall("call_a", "echo", {"text": "ping"}),
        ToolCall("call_b", "echo", {"text": "pong"}),
    )
    assert response.stop_reason == "tool_use"
    assert response.usage == Usage()  # the server sent no usage chunk: nothing is counted


async def test_streaming_off_makes_one_plain_call(server):
    server.reply(completion("whole"))
    events = await collect(make_model(server.url, stream=False))
    assert events == [TextDelta("whole"), ModelResponse("whole", (), "end_turn", Usage())]
    assert "stream" not in server.requests[0].body


def test_streaming_off_tells_the_host_to_call_complete(server):
    assert (streams(make_model(server.url)), streams(make_model(server.url, stream=False))) == (
        True,
        False,
    )


async def test_a_server_that_ignores_stream_is_read_whole(server):
    server.reply(completion("all at once"))
    events = await collect(make_model(server.url))
    assert events == [TextDelta("all at once"), ModelResponse("all at once", (), "end_turn")]


async def test_sse_comments_and_multi_line_data_are_read(server):
    chunk = stream_chunks("ok")[1]
    text = json.dumps(chunk, indent=1).replace("\n", "\ndata: ")
    server.reply(Stream([": keep-alive\n\n", f"event: message\ndata: {text}\n\n"]))
    events = await collect(make_model(server.url))
    assert events == [TextDelta("ok"), ModelResponse("ok", (), "end_turn")]


async def test_an_empty_stream_for_a_request_with_tools_is_made_again_whole(server, caplog):
    """llama-cpp-python's chatml-function-calling cannot stream when tools are offered: it
    answers 200 with an event stream and closes it before the first event."""
    server.reply(
        Stream([], done=False),
        completion(None, [tool_call("c1", "echo", "{}")], "tool_calls"),
        completion("second"),
    )
    model = make_model(server.url)
    events = await collect(model, WITH_TOOLS)
    assert events == [ModelResponse("", (ToolCall("c1", "echo", {}),), "tool_use")]
    assert "no longer streamed" in caplog.text
    await collect(model, WITH_TOOLS)  # later requests with tools go out whole at once
    assert [r.body.get("stream", False) for r in server.requests] == [True, False, False]


PINGS = [": ping\n\n"] * 40  # what llama-cpp-python keeps sending on a stream it gave up on


async def test_a_stream_kept_open_with_pings_only_stalls(server):
    server.reply(Stream(PINGS, pace=0.05, done=False))
    error = await stream_fails(make_model(server.url, timeout=0.3))
    assert (error.code, error.message) == (
        "MODEL_UNAVAILABLE",
        f"model server {server.url} sent nothing for 0.3s after accepting the request",
    )


async def test_pings_only_for_a_request_with_tools_fall_back_to_a_whole_call(server):
    server.reply(Stream(PINGS, pace=0.05, done=False), completion("whole"))
    events = await collect(make_model(server.url, timeout=0.3), WITH_TOOLS)
    assert events[-1].text == "whole"
    assert [r.body.get("stream", False) for r in server.requests] == [True, False]


async def test_stream_tools_off_sends_requests_with_tools_whole(server):
    server.reply(completion("whole"), Stream(stream_chunks("streamed")))
    model = make_model(server.url, stream_tools=False)
    assert (await collect(model, WITH_TOOLS))[-1].text == "whole"
    assert (await collect(model))[-1].text == "streamed"  # no tools: streamed as usual
    assert [r.body.get("stream", False) for r in server.requests] == [False, True]


async def test_an_empty_stream_without_tools_is_still_an_error(server):
    server.reply(Stream([], done=False))
    error = await stream_fails(make_model(server.url))
    assert error.message.endswith("sent a bad stream: the stream ended before [DONE]")


# -- bad streams: one line, MODEL_BAD_RESPONSE ------------------------------------------------

CALL = tool_call("call_1", "echo", '{"text": "ping"}')


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (Stream(["data: {not json\n\n"]), "an event's data is not JSON"),
        (Stream(["data: [1, 2]\n\n"]), "an event's data is not a JSON object"),
        (Stream([{"object": "chat.completion.chunk"}]), "a chunk has no choices list"),
        (Stream(stream_chunks("cut short"), done=False), "the stream ended before [DONE]"),
        (
            Stream(stream_chunks("", [CALL], "tool_calls")[:3], done=False, cut=True),
            "the stream broke off: ",
        ),
        (
            Stream(
                [
                    {
                        "choices": [
                            {
                                "index": 0,
                                "delta": {
                                    "tool_calls": [{"index": 3, "function": {"arguments": "{}"}}]
                                },
                            }
                        ]
                    }
                ]
            ),
            "a tool-call delta continues call 3, which no delta started",
        ),
        (
            Stream([{"error": {"message": "the model crashed"}}]),
            "it reported an error mid-stream: the model crashed",
        ),
    ],
    ids=[
        "not-json",
        "not-object",
        "no-choices",
        "no-done",
        "cut-mid-call",
        "unknown-index",
        "error",
    ],
)
async def test_a_bad_stream_is_one_line(server, reply, why):
    server.reply(reply)
    error = await stream_fails(make_model(server.url))
    assert error.code == "MODEL_BAD_RESPONSE"
    assert error.message.startswith(f"model server {server.url} sent a bad stream: {why}")
    assert len(server.requests) == 1  # a stream is never retried


async def test_a_stream_that_stalls_is_unavailable_not_retried(server):
    server.reply(Stream(stream_chunks("slow words here"), pace=1.0))
    error = await stream_fails(make_model(server.url, timeout=0.2))
    assert (error.code, error.message) == (
        "MODEL_UNAVAILABLE",
        f"model server {server.url} sent nothing for 0.2s in the middle of an answer",
    )
    assert len(server.requests) == 1


async def test_errors_before_the_stream_begins_are_retried(server, sleeps):
    server.reply(Reply(503, {"error": {"message": "busy"}}), Stream(stream_chunks("fine")))
    events = await collect(make_model(server.url, sleep=sleeps))
    assert events[-1].text == "fine"
    assert len(sleeps.delays) == 1


# -- validation errors and strictness ----------------------------------------------------------


async def test_a_500_that_is_a_validation_error_is_not_retried(server, sleeps):
    body = {"error": {"message": "1 validation error for ChatCompletionRequest", "type": "x"}}
    server.reply(Reply(500, body), completion("never"))
    with pytest.raises(OpenAIModelError) as caught:
        await make_model(server.url, sleep=sleeps).complete(request(), signal=CancelSignal())
    assert caught.value.code == "MODEL_REJECTED"
    assert caught.value.message == (
        f"model server {server.url} rejected the request (500): "
        "1 validation error for ChatCompletionRequest"
    )
    assert sleeps.delays == []


async def test_a_request_the_strict_server_refuses_is_not_retried(server, sleeps):
    """A tool result that answers no call: the strict server answers 500 with validation
    errors, as llama-cpp-python does; the model fails at once instead of retrying."""
    server.reply(completion("never"))
    orphan = MessageEvent(role="tool", content="3", tool_call_id="c9")
    with pytest.raises(OpenAIModelError) as caught:
        await make_model(server.url, sleep=sleeps).complete(
            request(MessageEvent(role="user", content="hi"), orphan), signal=CancelSignal()
        )
    assert caught.value.code == "MODEL_REJECTED"
    assert caught.value.message.startswith(
        f"model server {server.url} rejected the request (500): 1 validation error: "
        'messages[1].tool_call_id: "c9" answers no earlier assistant tool call'
    )
    assert (len(server.requests), sleeps.delays) == (1, [])


async def test_the_strict_server_accepts_what_the_model_sends_after_a_tool_call(server):
    """The whole history of a tool round trip passes the strict server's checks."""
    server.reply(completion("done"))
    history = (
        MessageEvent(role="user", content="echo ping"),
        MessageEvent(role="assistant", content="", tool_calls=(ToolCall("c1", "echo", {}),)),
        MessageEvent(role="tool", content="ping", tool_call_id="c1", is_error=True),
    )
    response = await make_model(server.url).complete(request(*history), signal=CancelSignal())
    assert response.text == "done"
    assert server.requests[0].rejected is None


# -- pooling -----------------------------------------------------------------------------------


async def test_consecutive_calls_reuse_one_connection(server):
    server.reply(completion("1"), Stream(stream_chunks("2")), completion("3"))
    model = make_model(server.url)
    await model.complete(request(), signal=CancelSignal())
    await collect(model)
    await model.complete(request(), signal=CancelSignal())
    assert server.connections == 1
    await model.aclose()


async def test_aclose_closes_the_pool_and_a_later_call_opens_a_new_one(server):
    server.reply(completion("1"), completion("2"))
    model = make_model(server.url)
    await model.complete(request(), signal=CancelSignal())
    await model.aclose()
    await model.complete(request(), signal=CancelSignal())
    assert server.connections == 2
    await model.aclose()


# -- interrupts --------------------------------------------------------------------------------


async def test_closing_the_stream_mid_answer_closes_the_request(server):
    server.reply(Stream(stream_chunks(" ".join(["word"] * 50)), pace=0.05))
    stream = make_model(server.url).stream(request(), signal=CancelSignal())
    first = await anext(stream)
    assert first == TextDelta("word")
    await stream.aclose()
    recorded = server.requests[0]
    assert await asyncio.to_thread(recorded.finished.wait, 10)
    assert recorded.client_gone


async def test_an_interrupted_agent_keeps_the_partial_text(make_host, server):
    """Interrupt mid-stream: the request closes, the text so far is the step's answer, the turn
    ends interrupted, and no delta was written to the log on its own."""
    import agent_host_openai

    server.reply(Stream(stream_chunks(" ".join(f"w{i}" for i in range(200))), pace=0.02))
    host = make_host(
        ("openai", agent_host_openai),
        config={
            "plugins": {
                "openai": {"base_url": server.url, "model": "m"},
                "models": {"default": "openai"},
            }
        },
    )
    agent = await host.services.agents.create(label="user")
    seen: list[object] = []
    agent.on_stream(seen.append)
    agent.followup("count")
    while len(seen) < 5:
        await asyncio.sleep(0.01)
    agent.interrupt()
    await agent.wait_idle()

    recorded = server.requests[0]
    assert await asyncio.to_thread(recorded.finished.wait, 10)
    assert recorded.client_gone
    streamed = "".join(e.text for e in seen if isinstance(e, TextDelta))
    bodies = [e.body for e in agent.session.events]
    answers = [b for b in bodies if isinstance(b, MessageEvent) and b.role == "assistant"]
    assert [a.content for a in answers] == [streamed]
    assert streamed.startswith("w0 w1 w2 w3")
    assert [b.stop_reason for b in bodies if isinstance(b, TurnEnd)] == ["interrupted"]
    await host.aclose()


async def test_a_request_limit_below_the_model_limit_wins(server):
    server.reply(completion("a"), Stream(stream_chunks("b")), completion("c"))
    model = make_model(server.url, max_tokens=100)
    hi = (MessageEvent(role="user", content="hi"),)
    await model.complete(ModelRequest("a", None, "", hi, max_tokens=20), signal=CancelSignal())
    await collect(model, ModelRequest("a", None, "", hi, max_tokens=20))
    await model.complete(ModelRequest("a", None, "", hi, max_tokens=500), signal=CancelSignal())
    assert [body["max_tokens"] for body in server.bodies()] == [20, 20, 100]


# -- in a host -------------------------------------------------------------------------------


def openai_host(make_host, server):
    import agent_host_openai

    table = {"base_url": server.url, "model": "m"}
    return make_host(("openai", agent_host_openai), config={"plugins": {"openai": table}})


async def test_the_pool_is_kept_across_turns_and_closed_with_the_host(make_host, server):
    server.reply(Stream(stream_chunks("one")), Stream(stream_chunks("two")))
    host = openai_host(make_host, server)
    agent = await host.services.agents.create(label="user")
    for text in ("first", "second"):
        agent.followup(text)
        await agent.wait_idle()
    assert [m.content for m in agent.session.model_messages() if m.role == "assistant"] == [
        "one",
        "two",
    ]
    assert (server.connections, server.open_connections) == (1, 1)
    await host.aclose()
    assert await soon(lambda: server.open_connections == 0)


async def test_reloading_the_plugin_closes_the_old_models_pool(make_host, server):
    server.reply(Stream(stream_chunks("one")))
    host = openai_host(make_host, server)
    agent = await host.services.agents.create(label="user")
    agent.followup("hi")
    await agent.wait_idle()
    assert server.open_connections == 1
    assert host.reload("openai").ok
    assert await soon(lambda: server.open_connections == 0)
    await host.aclose()


async def test_a_stream_cut_mid_tool_call_ends_the_turn_with_no_partial_call(make_host, server):
    chunks = stream_chunks("Let me", [CALL], "tool_calls")
    server.reply(Stream(chunks[:-2], done=False, cut=True))  # cut inside the call's arguments
    host = openai_host(make_host, server)
    agent = await host.services.agents.create(label="user")
    agent.followup("echo ping")
    await agent.wait_idle()

    bodies = [e.body for e in agent.session.events]
    [end] = [b for b in bodies if isinstance(b, TurnEnd)]
    assert end.stop_reason == "error"
    assert end.error.startswith(
        f"model server {server.url} sent a bad stream: the stream broke off"
    )
    assert [b for b in bodies if isinstance(b, MessageEvent) and b.role == "assistant"] == []
    persistence = host.services.session_persistence
    await host.aclose()
    stored = await persistence.inspect(agent.id)  # the log as a later host reads it
    assert [type(e.body).__name__ for e in stored.events] == [type(b).__name__ for b in bodies]


async def test_an_error_body_that_breaks_off_is_a_retried_connection_failure(server, sleeps):
    """A 503 whose body is cut mid-way: one line naming the server, retried, then success."""
    server.reply(
        Stream(['{"error": {"mess'], status=503, done=False, cut=True),
        Stream(stream_chunks("ok")),
    )
    events = await collect(make_model(server.url, sleep=sleeps))  # the streamed path
    assert events[-1].text == "ok"
    assert len(sleeps.delays) == 1
