"""``repeats.asked_again``: which answers repeat the calls just answered, and what is asked
instead."""

from __future__ import annotations

import json

import attrs
import pytest
from agent_host_openai.repeats import NOTE, asked_again

from host.agents.models import ModelRequest, ModelResponse, ToolSpec
from host.sessions.model import MessageEvent, ToolCall

ADD = ToolSpec("add", "Add.", {"type": "object", "properties": {}})
CALL = ToolCall("c1", "add", {"a": 2, "b": {"x": 1, "y": 2}})


def request(*messages: MessageEvent) -> ModelRequest:
    user = MessageEvent(role="user", content="add")
    return ModelRequest("a", None, "", (user, *messages), (ADD,))


def answered(*results: tuple[str, str]) -> ModelRequest:
    calls = tuple(ToolCall(i, "add", dict(CALL.arguments)) for i, _ in results)
    tools = [MessageEvent(role="tool", content=text, tool_call_id=i) for i, text in results]
    return request(MessageEvent(role="assistant", content="", tool_calls=calls), *tools)


def repeat(arguments: dict[str, object]) -> ModelResponse:
    return ModelResponse("", (ToolCall("c9", "add", arguments),), "tool_use")


def test_the_same_arguments_in_another_key_order_are_a_repeat():
    again = asked_again(answered(("c1", "5")), repeat({"b": {"y": 2, "x": 1}, "a": 2}))
    assert again is not None and again.tools == ()
    assert [(m.role, m.tool_call_id) for m in again.messages[-2:]] == [
        ("assistant", None),
        ("tool", "c9"),
    ]
    assert again.messages[-1].content == NOTE.format(name="add", outcome="returned: 5")


def test_an_error_result_is_restated_as_a_failure():
    tools = MessageEvent(role="tool", content="boom", tool_call_id="c1", is_error=True)
    calls = (CALL,)
    req = request(MessageEvent(role="assistant", content="", tool_calls=calls), tools)
    again = asked_again(req, repeat(dict(CALL.arguments)))
    assert again is not None
    assert again.messages[-1].content == NOTE.format(name="add", outcome="failed: boom")


@pytest.mark.parametrize(
    "req",
    [
        pytest.param(request(), id="no call before"),
        pytest.param(
            request(MessageEvent(role="assistant", content="", tool_calls=(CALL,))),
            id="a call without its result",
        ),
        pytest.param(
            request(
                MessageEvent(role="assistant", content="", tool_calls=(CALL,)),
                MessageEvent(role="tool", content="5", tool_call_id="c1"),
                MessageEvent(role="user", content="and again?"),
            ),
            id="the user spoke since",
        ),
    ],
)
def test_anything_else_is_no_repeat(req):
    assert asked_again(req, repeat(dict(CALL.arguments))) is None


def test_a_different_call_is_no_repeat():
    assert asked_again(answered(("c1", "5")), repeat({"a": 3})) is None


def test_text_opening_with_the_call_just_answered_is_a_repeat():
    text = json.dumps({"name": "add", "arguments": CALL.arguments}) + ' {"response": 5}'
    again = asked_again(answered(("c1", "5")), ModelResponse(text))
    assert again is not None and again.tools == ()
    [call] = again.messages[-2].tool_calls
    assert (call.name, call.arguments, call.id.startswith("call_")) == ("add", CALL.arguments, True)
    assert again.messages[-1].tool_call_id == call.id


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('{"name": "add", "arguments": {"a": 3}} more', id="another call"),
        pytest.param('The sum is {"name": "add"}', id="text first"),
        pytest.param('{"name": "add", "arguments": {"a": 2', id="torn"),
        pytest.param("", id="empty"),
    ],
)
def test_other_text_is_no_repeat(text):
    assert asked_again(answered(("c1", "5")), ModelResponse(text)) is None


def test_nothing_is_asked_again_when_no_tools_are_offered():
    text = json.dumps({"name": "add", "arguments": CALL.arguments})
    req = attrs.evolve(answered(("c1", "5")), tools=())
    assert asked_again(req, ModelResponse(text)) is None
