"""``OpenAIModel`` against a real HTTP server on loopback: shapes, retries, errors, cancellation."""

from __future__ import annotations

import asyncio
import email.utils
import time

import httpx
import pytest
from agent_host_openai import MALFORMED_ARGUMENTS_KEY, OpenAIModelError
from agent_host_openai.convert import parse_arguments
from agent_host_openai.failures import parse_retry_after
from agent_host_openai.testing import Reply, completion, tool_call
from agent_host_openai.testing import model_on as make_model

from host.agents.models import ModelRequest, ToolSpec, Usage
from host.cancel import CancelSignal
from host.sessions.model import MessageEvent, ToolCall
from tests.support import free_port

ECHO = ToolSpec(
    "echo",
    "Echo the text back.",
    {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": False,
    },
)


def request(*messages, system="You are terse.", tools=(ECHO,)):
    if not messages:
        messages = (MessageEvent(role="user", content="hi"),)
    return ModelRequest(
        agent_id="agent_1", label=None, system_prompt=system, messages=messages, tools=tools
    )


async def fails(model, req=None, signal=None):
    with pytest.raises(OpenAIModelError) as caught:
        await model.complete(req or request(), signal=signal or CancelSignal())
    assert "\n" not in caught.value.message
    return caught.value


# -- request and response shapes -------------------------------------------------------------


async def test_request_shape(server):
    server.reply(completion("hello"))
    model = make_model(server.url + "/", api_key="sk-test")
    await model.complete(request(), signal=CancelSignal())

    [sent] = server.requests
    assert (sent.method, sent.path) == ("POST", "/v1/chat/completions")
    assert sent.headers["authorization"] == "Bearer sk-test"
    assert sent.headers["content-type"] == "application/json"
    assert sent.body == {
        "model": "test-model",
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "hi"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "echo",
                    "description": "Echo the text back.",
                    "parameters": ECHO.parameters,
                },
            }
        ],
        "tool_choice": "auto",
        "max_tokens": 4096,
    }


async def test_no_key_no_system_prompt_no_tools(server):
    server.reply(completion("hello"))
    await make_model(server.url).complete(request(system="", tools=()), signal=CancelSignal())
    [sent] = server.requests
    assert "authorization" not in sent.headers
    assert sent.body == {
        "model": "test-model",
        "messages": [{"role": "user", "content": "hi"}],
        "max_tokens": 4096,
    }


async def test_max_tokens_is_configurable_and_0_sends_no_limit(server):
    server.reply(completion("a"), completion("b"))
    await make_model(server.url, max_tokens=256).complete(request(), signal=CancelSignal())
    await make_model(server.url, max_tokens=0).complete(request(), signal=CancelSignal())
    first, second = server.bodies()
    assert first["max_tokens"] == 256
    assert "max_tokens" not in second


async def test_text_answer_with_usage(server):
    server.reply(
        completion("The answer is 4.", usage={"prompt_tokens": 12, "completion_tokens": 5})
    )
    response = await make_model(server.url).complete(request(), signal=CancelSignal())
    assert response.text == "The answer is 4."
    assert response.tool_calls == ()
    assert response.stop_reason == "end_turn"
    assert response.usage == Usage(input_tokens=12, output_tokens=5)


async def test_finish_reasons_map_to_stop_reasons(server):
    server.reply(
        completion("cut", finish_reason="length"),
        completion("odd", finish_reason="something_new"),
        completion("none", finish_reason=None),
    )
    model = make_model(server.url)
    reasons = [(await model.complete(request(), signal=CancelSignal())).stop_reason for _ in "abc"]
    assert reasons == ["max_tokens", "something_new", "end_turn"]


async def test_tool_calls_both_ways(server):
    """Step 1: the server asks for a tool call. Step 2: the call and its result go back."""
    server.reply(
        completion(
            None,
            tool_calls=[tool_call("call_1", "echo", '{"text": "ping"}')],
            finish_reason="tool_calls",
            usage={"prompt_tokens": 20, "completion_tokens": 7},
        ),
        completion("It said ping."),
    )
    model = make_model(server.url)
    user = MessageEvent(role="user", content="echo ping")

    first = await model.complete(request(user), signal=CancelSignal())
    assert first.text == ""
    assert first.tool_calls == (ToolCall(id="call_1", name="echo", arguments={"text": "ping"}),)
    assert first.stop_reason == "tool_use"
    assert first.usage == Usage(20, 7)

    assistant = MessageEvent(role="assistant", content="", tool_calls=first.tool_calls)
    result = MessageEvent(role="tool", content="ping", tool_call_id="call_1")
    second = await model.complete(request(user, assistant, result), signal=CancelSignal())
    assert second.text == "It said ping."

    sent = server.bodies()[1]["messages"]
    assert sent[2] == {  # "" and not null: llama.cpp answers 500 to null and to a missing key
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "echo", "arguments": '{"text": "ping"}'},
            }
        ],
    }
    assert sent[3] == {"role": "tool", "tool_call_id": "call_1", "content": "ping"}


async def test_assistant_text_with_tool_calls_and_plain_history(server):
    server.reply(completion("ok"))
    history = (
        MessageEvent(role="user", content="q1"),
        MessageEvent(role="assistant", content="a1"),
        MessageEvent(
            role="assistant",
            content="let me check",
            tool_calls=(ToolCall("c2", "echo", {"text": "x"}),),
        ),
        MessageEvent(role="tool", content="boom", tool_call_id="c2", is_error=True),
    )
    await make_model(server.url).complete(request(*history, system=""), signal=CancelSignal())
    sent = server.bodies()[0]["messages"]
    assert sent[0] == {"role": "user", "content": "q1"}
    assert sent[1] == {"role": "assistant", "content": "a1"}
    assert sent[2]["content"] == "let me check"
    assert sent[3] == {"role": "tool", "tool_call_id": "c2", "content": "boom"}


async def test_malformed_tool_arguments_are_kept_raw(server):
    server.reply(
        completion(
            None,
            tool_calls=[
                tool_call("c1", "echo", '{"text": "unterminated'),
                tool_call("c2", "echo", "[1, 2]"),
                tool_call("c3", "echo", ""),
            ],
            finish_reason="tool_calls",
        )
    )
    response = await make_model(server.url).complete(request(), signal=CancelSignal())
    assert [call.arguments for call in response.tool_calls] == [
        {MALFORMED_ARGUMENTS_KEY: '{"text": "unterminated'},
        {MALFORMED_ARGUMENTS_KEY: "[1, 2]"},
        {},
    ]


def test_parse_arguments_accepts_objects_and_dicts():
    assert parse_arguments('{"a": 1}') == {"a": 1}
    assert parse_arguments({"a": 1}) == {"a": 1}
    assert parse_arguments(None) == {}
    assert parse_arguments("nope") == {MALFORMED_ARGUMENTS_KEY: "nope"}


async def test_a_body_that_is_not_a_completion_is_a_clear_error(server):
    server.reply(Reply(200, "<html>proxy login</html>"), Reply(200, {"choices": []}))
    model = make_model(server.url)
    error = await fails(model)
    assert error.code == "MODEL_BAD_RESPONSE"
    assert error.message == f"model server {server.url} sent an unreadable response: it is not JSON"
    error = await fails(model)
    assert error.message.endswith("sent an unreadable response: it has no choices")
    assert len(server.requests) == 2  # not retried


# -- retries and errors ----------------------------------------------------------------------


async def test_429_then_success_honours_retry_after(server, sleeps):
    server.reply(
        Reply(429, {"error": {"message": "slow down"}}, headers={"Retry-After": "0.02"}),
        Reply(503, "overloaded", headers={"retry-after-ms": "30"}),
        completion("finally"),
    )
    model = make_model(server.url, sleep=sleeps)
    response = await model.complete(request(), signal=CancelSignal())
    assert response.text == "finally"
    assert len(server.requests) == 3
    assert sleeps.delays == [0.02, 0.03]


async def test_retry_after_really_waits(server):
    server.reply(Reply(429, "", headers={"Retry-After": "0.2"}), completion("ok"))
    started = time.monotonic()
    await make_model(server.url).complete(request(), signal=CancelSignal())
    assert time.monotonic() - started >= 0.2


async def test_500s_give_a_clear_error_after_max_retries(server, sleeps):
    for _ in range(3):
        server.reply(Reply(500, {"error": {"message": "upstream   exploded\nbadly"}}))
    model = make_model(server.url, max_retries=2, sleep=sleeps)
    error = await fails(model)
    assert error.code == "MODEL_UNAVAILABLE"
    assert error.message == (
        f"model server {server.url} is unavailable: HTTP 500: upstream exploded badly"
        " (gave up after 3 attempts)"
    )
    assert len(server.requests) == 3
    first, second = sleeps.delays  # exponential backoff with up to 25 % jitter
    assert 0.001 <= first <= 0.00125
    assert 0.002 <= second <= 0.0025


async def test_429_without_retries_left(server):
    server.reply(Reply(429, {"error": {"message": "quota"}}))
    error = await fails(make_model(server.url, max_retries=0))
    assert error.message == f"model server {server.url} is rate limiting requests: HTTP 429: quota"


async def test_401_is_an_auth_error_without_retries(server, sleeps):
    server.reply(Reply(401, {"error": {"message": "Incorrect API key provided"}}))
    error = await fails(make_model(server.url, api_key="sk-wrong", sleep=sleeps))
    assert error.code == "MODEL_AUTH"
    assert error.message == (
        f"model server {server.url} rejected the API key (401): Incorrect API key provided"
    )
    assert len(server.requests) == 1
    assert sleeps.delays == []


async def test_403_without_a_key_names_the_variable(server):
    server.reply(Reply(403, ""))
    error = await fails(make_model(server.url, api_key_env="MY_KEY"))
    assert error.code == "MODEL_AUTH"
    assert error.message == (
        f"model server {server.url} requires an API key (403): set MY_KEY in the environment"
    )


async def test_401_for_a_table_that_names_no_key_says_to_name_one(server):
    server.reply(Reply(401, ""))
    error = await fails(make_model(server.url, api_key_env=None))
    assert error.code == "MODEL_AUTH"
    assert error.message == (
        f"model server {server.url} requires an API key (401): name the variable holding it "
        "in its models table's api_key_env"
    )


async def test_other_4xx_is_rejected_without_retries(server):
    server.reply(Reply(404, {"error": {"message": "The model `test-model` does not exist"}}))
    error = await fails(make_model(server.url))
    assert error.code == "MODEL_REJECTED"
    assert error.message == (
        f"model server {server.url} rejected the request (404):"
        " The model `test-model` does not exist"
    )
    assert len(server.requests) == 1


async def test_unreachable_port_is_one_line(sleeps):
    url = f"http://127.0.0.1:{free_port()}"
    error = await fails(make_model(url, max_retries=0))
    assert error.code == "MODEL_UNAVAILABLE"
    assert error.message == f"model server {url} is unreachable: connection refused"

    error = await fails(make_model(url + "/v1", max_retries=2, sleep=sleeps))
    assert error.message == (
        f"model server {url}/v1 is unreachable: connection refused (gave up after 3 attempts)"
    )
    assert len(sleeps.delays) == 2


async def test_credentials_in_the_url_are_not_shown(sleeps):
    port = free_port()
    model = make_model(f"http://user:secret@127.0.0.1:{port}/v1", max_retries=0)
    error = await fails(model)
    assert "secret" not in error.message
    assert error.message.startswith(f"model server http://127.0.0.1:{port}/v1 is unreachable")


async def test_a_read_timeout_is_not_retried_by_default(server, sleeps):
    """The server may still be generating the abandoned answer: a retry would queue behind it."""
    server.reply(Reply(delay=2.0, body=completion("late")), completion("never asked for"))
    model = make_model(server.url, timeout=0.2, max_retries=3, sleep=sleeps)
    error = await fails(model)
    assert error.code == "MODEL_UNAVAILABLE"
    assert error.message == (
        f"model server {server.url} did not answer within 0.2s (not retried: it may still be "
        "generating; set retry_read_timeouts to retry)"
    )
    assert len(server.requests) == 1
    assert sleeps.delays == []


async def test_a_read_timeout_is_retried_when_configured(server, sleeps):
    # the answers come long after the test ends (stopping the server ends their delays): an
    # error naming the timeout is proof that neither was awaited, whatever the machine's load
    server.reply(
        Reply(delay=600.0, body=completion("late")), Reply(delay=600.0, body=completion("late"))
    )
    model = make_model(
        server.url, timeout=0.2, max_retries=1, retry_read_timeouts=True, sleep=sleeps
    )
    error = await fails(model)
    assert len(sleeps.delays) == 1  # one backoff between the two attempts
    assert error.code == "MODEL_UNAVAILABLE"
    assert error.message == (
        f"model server {server.url} did not answer within 0.2s (gave up after 2 attempts)"
    )
    assert len(server.requests) == 2


# -- cancellation ----------------------------------------------------------------------------


async def test_signal_cancels_an_in_flight_request(server):
    server.reply(Reply(delay=600.0, body=completion("too late")))  # never, within the test
    signal = CancelSignal()
    model = make_model(server.url, timeout=600.0)
    call = asyncio.ensure_future(model.complete(request(), signal=signal))
    while not server.requests:  # the request reached the server
        await asyncio.sleep(0.01)
    signal.set("interrupted")
    with pytest.raises(OpenAIModelError) as caught:
        await asyncio.wait_for(call, 60)  # a hang guard: the answer would take 600 s
    assert (caught.value.code, caught.value.message) == (
        "CANCELLED",
        "model request cancelled: interrupted",
    )


async def test_signal_cancels_a_retry_wait(server):
    server.reply(Reply(503, "", headers={"Retry-After": "30"}))
    signal = CancelSignal()
    waiting = asyncio.Event()
    delays: list[float] = []

    async def sleep(delay: float) -> None:
        delays.append(delay)
        waiting.set()
        await asyncio.sleep(delay)

    call = asyncio.ensure_future(
        make_model(server.url, sleep=sleep).complete(request(), signal=signal)
    )
    await waiting.wait()  # the retry wait has begun
    signal.set()
    with pytest.raises(OpenAIModelError) as caught:
        await asyncio.wait_for(call, 20)  # a hang guard: the wait would take 30 s
    assert caught.value.code == "CANCELLED"
    assert (delays, len(server.requests)) == ([30.0], 1)


async def test_a_set_signal_sends_nothing(server):
    signal = CancelSignal()
    signal.set("stop")
    error = await fails(make_model(server.url), signal=signal)
    assert (error.code, error.message) == ("CANCELLED", "model request cancelled: stop")
    assert server.requests == []


async def test_task_cancellation_propagates(server):
    server.reply(Reply(delay=5.0, body=completion("too late")))
    call = asyncio.ensure_future(make_model(server.url).complete(request(), signal=CancelSignal()))
    while not server.requests:
        await asyncio.sleep(0.01)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call


# -- Retry-After parsing ---------------------------------------------------------------------


def test_parse_retry_after():
    def parse(**headers):
        return parse_retry_after(
            httpx.Headers({k.replace("_", "-"): v for k, v in headers.items()})
        )

    assert parse(retry_after="2") == 2.0
    assert parse(retry_after_ms="1500", retry_after="9") == 1.5
    assert parse(retry_after="600") is None  # too long: the backoff decides
    assert parse(retry_after="-1") is None
    assert parse(retry_after="soon") is None
    assert parse() is None
    soon = email.utils.formatdate(time.time() + 10, usegmt=True)
    assert 8 <= parse(retry_after=soon) <= 10


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("<html>gateway</html>", "it is not JSON"),
        ({"id": "x", "object": "chat.completion"}, None),
    ],
)
async def test_a_malformed_reply_is_one_clear_error(server, body, why):
    server.reply(Reply(200, body))
    with pytest.raises(OpenAIModelError) as caught:
        await make_model(server.url).complete(request(), signal=CancelSignal())
    assert caught.value.code == "MODEL_BAD_RESPONSE"
    assert caught.value.message.startswith(
        f"model server {server.url} sent an unreadable response: "
    )
    if why is not None:
        assert caught.value.message.endswith(why)
    assert "\n" not in caught.value.message
