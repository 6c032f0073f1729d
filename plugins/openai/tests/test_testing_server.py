"""The loopback ``FakeServer`` itself, through plain httpx: strict bodies, streaming, pooling."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest
from agent_host_openai.testing import (
    REJECT_STATUS,
    FakeServer,
    Reply,
    Stream,
    completion,
    rejection_body,
    sse,
    stream_chunks,
    text_tokens,
    tool_call,
)

WAIT = 10.0  # a cap on waiting for the server thread, never a measured threshold

USER = {"role": "user", "content": "echo ping"}
CALL = {"role": "assistant", "content": "", "tool_calls": [tool_call("c1", "echo", "{}")]}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "ping"}


def post(server, messages, **extra):
    body = {"model": "m", "messages": messages, **extra}
    return httpx.post(f"{server.url}/chat/completions", json=body)


# -- strict request validation ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("messages", "reason"),
    [
        (
            [USER, {**CALL, "content": None}, RESULT],
            "messages[1].content: null in an assistant message with tool_calls",
        ),
        (
            [USER, {k: v for k, v in CALL.items() if k != "content"}, RESULT],
            "messages[1].content: missing in an assistant message with tool_calls",
        ),
        ([{"role": "user", "content": None}], "messages[0].content: expected a string, got null"),
        (
            [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
            "messages[0].content: expected a string, got a list",
        ),
        (
            [{"role": "system", "content": 7}, USER],
            "messages[0].content: expected a string, got a number",
        ),
        (
            [USER, {"role": "assistant", "content": None}],
            "messages[1].content: expected a string, got null",
        ),
        (
            [USER, CALL, {**RESULT, "tool_call_id": "c2"}],
            'messages[2].tool_call_id: "c2" answers no earlier assistant tool call',
        ),
        (
            [USER, RESULT, CALL],
            'messages[1].tool_call_id: "c1" answers no earlier assistant tool call',
        ),
        ([USER, {"role": "robot", "content": "x"}], 'messages[1].role: unknown role "robot"'),
        ([], "messages: expected a non-empty list"),
    ],
)
def test_a_malformed_conversation_is_refused_and_recorded(server, messages, reason):
    server.reply(completion("unused"))
    response = post(server, messages)

    assert response.status_code == REJECT_STATUS == 500
    assert response.json() == {  # as llama-cpp-python's server answers
        "error": {
            "message": f"1 validation error:\n  {reason}",
            "type": "internal_server_error",
            "param": None,
            "code": None,
        }
    }
    assert response.json() == rejection_body(reason)
    [recorded] = server.requests
    assert recorded.rejected == reason
    assert recorded.body["messages"] == messages
    assert len(server.replies) == 1  # the scripted reply is still there for the next request


def test_a_valid_conversation_with_tool_calls_passes(server):
    server.reply(completion("It said ping."))
    tools = [{"type": "function", "function": {"name": "echo", "parameters": {}}}]
    messages = [{"role": "system", "content": "Be terse."}, USER, CALL, RESULT]
    response = post(server, messages, tools=tools)

    assert response.status_code == 200
    assert response.json() == completion("It said ping.")
    [recorded] = server.requests
    assert recorded.rejected is None
    assert recorded.body["tools"] == tools
    assert "tool_choice" not in recorded.body  # allowed, and visible to tests


def test_not_strict_answers_anything():
    server = FakeServer(strict=False)
    server.start()
    try:
        server.reply(completion("fine"))
        response = post(server, [{"role": "user", "content": None}])
    finally:
        server.stop()
    assert response.status_code == 200
    assert server.requests[0].rejected is None


def test_only_chat_completions_are_validated(server):
    server.reply({"data": []})
    response = httpx.post(f"{server.url}/embeddings", json={"input": "x"})
    assert (response.status_code, response.json()) == (200, {"data": []})
    assert server.requests[0].rejected is None


# -- streaming -------------------------------------------------------------------------------


def test_a_stream_sends_the_exact_events_then_done(server):
    chunks = stream_chunks("Hi there")
    server.reply(Stream([*chunks, ": keep-alive\n\n"]))
    with httpx.stream("POST", f"{server.url}/chat/completions", json={"messages": [USER]}) as r:
        headers = r.headers
        received = b"".join(r.iter_raw())

    assert headers["content-type"] == "text/event-stream"
    assert headers["transfer-encoding"] == "chunked"
    expected = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks)
    assert received.decode() == expected + ": keep-alive\n\ndata: [DONE]\n\n"
    assert not server.requests[0].client_gone


def test_a_stream_without_done(server):
    server.reply(Stream([{"n": 1}], done=False))
    with httpx.stream("POST", f"{server.url}/chat/completions", json={"messages": [USER]}) as r:
        assert r.read() == b'data: {"n": 1}\n\n'


def test_a_paced_stream_waits_between_chunks(server):
    pace = 0.05
    server.reply(Stream([{"n": n} for n in range(4)], pace=pace))
    start = time.monotonic()
    with httpx.stream("POST", f"{server.url}/chat/completions", json={"messages": [USER]}) as r:
        body = r.read()
    assert time.monotonic() - start >= 3 * pace  # a lower bound: three waits before the last
    assert body.decode() == "".join(sse({"n": n}) for n in range(4)) + "data: [DONE]\n\n"


def test_chunks_arrive_before_the_stream_ends(server):
    """The first event is readable while the server still waits (a minute) for the second."""
    server.reply(Stream([{"n": 1}, {"n": 2}], pace=60))
    with httpx.stream("POST", f"{server.url}/chat/completions", json={"messages": [USER]}) as r:
        assert next(r.iter_raw()) == sse({"n": 1}).encode()
    [recorded] = server.requests
    assert recorded.finished.wait(WAIT)
    assert recorded.client_gone  # closing the response closed the request: the server stopped


def test_a_cut_stream_ends_without_the_last_chunk(server):
    server.reply(Stream([{"n": 1}], cut=True))
    received: list[Any] = []
    with (
        pytest.raises(httpx.RemoteProtocolError),
        httpx.stream("POST", f"{server.url}/chat/completions", json={"messages": [USER]}) as r,
    ):
        received.extend(r.iter_raw())
    assert b"".join(received) == b'data: {"n": 1}\n\ndata: [DONE]\n\n'


def test_a_stream_can_carry_an_error_status(server):
    server.reply(Stream(['data: {"error": {"message": "busy"}}\n\n'], done=False, status=503))
    with httpx.stream("POST", f"{server.url}/chat/completions", json={"messages": [USER]}) as r:
        assert (r.status_code, r.read()) == (503, b'data: {"error": {"message": "busy"}}\n\n')


def test_stop_ends_a_stream_in_flight(server):
    server.reply(Stream([{"n": 1}, {"n": 2}], pace=60))
    with (
        pytest.raises(httpx.RemoteProtocolError),
        httpx.stream("POST", f"{server.url}/chat/completions", json={"messages": [USER]}) as r,
    ):
        chunks = r.iter_raw()
        next(chunks)
        server.stop()
        list(chunks)
    assert server.requests[0].finished.wait(WAIT)


def test_a_client_gone_during_a_delay_is_recorded(server):
    server.reply(Reply(delay=60, body=completion("late")))
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{server.url}/chat/completions", json={"messages": [USER]}, timeout=0.2)
    [recorded] = server.requests
    assert recorded.finished.wait(WAIT)  # long before the minute is up
    assert recorded.client_gone


# -- connections -----------------------------------------------------------------------------


def test_one_client_reuses_one_connection(server):
    server.reply(completion("a"), Stream(stream_chunks("b")), completion("c"))
    with httpx.Client() as client:
        for _ in range(3):
            response = client.post(f"{server.url}/chat/completions", json={"messages": [USER]})
            assert response.status_code == 200
    assert server.connections == 1  # a finished stream leaves the connection reusable


def test_separate_clients_open_separate_connections(server):
    server.reply(completion("a"), completion("b"))
    for _ in range(2):
        with httpx.Client() as client:
            client.post(f"{server.url}/chat/completions", json={"messages": [USER]})
    assert server.connections == 2


def test_a_cut_stream_costs_the_connection(server):
    server.reply(Stream([{"n": 1}], cut=True), completion("b"))
    with httpx.Client() as client:
        with pytest.raises(httpx.RemoteProtocolError):
            client.post(f"{server.url}/chat/completions", json={"messages": [USER]})
        client.post(f"{server.url}/chat/completions", json={"messages": [USER]})
    assert server.connections == 2


# -- chunk builders --------------------------------------------------------------------------


def deltas(chunks):
    return [chunk["choices"][0]["delta"] for chunk in chunks if chunk["choices"]]


def test_stream_chunks_for_text():
    chunks = stream_chunks("Hello big  world", usage={"prompt_tokens": 3, "completion_tokens": 4})
    assert {chunk["object"] for chunk in chunks} == {"chat.completion.chunk"}
    assert deltas(chunks) == [
        {"role": "assistant", "content": ""},
        {"content": "Hello"},
        {"content": " big"},
        {"content": "  world"},
        {},
    ]
    assert [chunk["choices"][0]["finish_reason"] for chunk in chunks[:-1]] == [None] * 4 + ["stop"]
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"] == {"prompt_tokens": 3, "completion_tokens": 4}


def test_stream_chunks_in_pieces():
    assert deltas(stream_chunks("abcdefg", pieces=3))[1:4] == [
        {"content": "abc"},
        {"content": "def"},
        {"content": "g"},
    ]
    assert len(stream_chunks("", pieces=3)) == 2  # the role and the finish reason


def test_stream_chunks_for_tool_calls():
    calls = [tool_call("c1", "echo", '{"text": "ping"}'), tool_call("c2", "now", "")]
    chunks = stream_chunks(tool_calls=calls, finish_reason="tool_calls")
    assert deltas(chunks) == [
        {"role": "assistant", "content": ""},
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "echo", "arguments": ""},
                }
            ]
        },
        {"tool_calls": [{"index": 0, "function": {"arguments": '{"text'}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": '": "pi'}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": 'ng"}'}}]},
        {
            "tool_calls": [
                {
                    "index": 1,
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "now", "arguments": ""},
                }
            ]
        },
        {},
    ]
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_text_tokens():
    assert text_tokens(3) == "w0 w1 w2"
    assert len(stream_chunks(text_tokens(500))) == 502
