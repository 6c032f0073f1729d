"""Writing an event or a header gives exactly what cattrs' generated hooks give, without calling
them for the plain bodies every child appends (``host.sessions.event_hooks``: the writers)."""

from __future__ import annotations

import enum
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import attrs
from cattrs.gen import make_dict_unstructure_fn

from host.serialization import converter
from host.sessions import event_hooks
from host.sessions.codec import encode_events, encode_header
from host.sessions.model import (
    Compaction,
    Event,
    InboxAccepted,
    InboxClaimed,
    MessageEvent,
    PluginEvent,
    SessionHeader,
    SubagentDescriptorEvent,
    ToolCall,
    TurnEnd,
    TurnStart,
)


class Colour(enum.Enum):
    """A value of a class the fast path does not know."""

    RED = "red"


@attrs.frozen
class Point:
    """An attrs value inside a loosely typed field."""

    x: int


DESCRIPTOR = {
    "version": 1,
    "mode": "continuable",
    "provider": "spawn",
    "label": "task 1",
    "tool_filter": {"allow": ["read_*", "grep"], "deny": []},
    "max_steps": 8,
}
START = {"kind": "subagent-start", "sender_session_id": "agent_p", "parent_tool_call_id": "c1"}
ODD: list[Any] = [
    None, 0, -1, 2**70, 1.5, float("inf"), True, "", "ü", [], (), {}, [1, (2, [3])],
    {"a": {"b": [None, 1.0, False]}}, {"a": (1,)}, {1: "int key"}, {(1,): "tuple key"},
    {"a": {2: "nested int key"}}, b"bytes", {"a": b"b"}, [b"b"], Colour.RED, {"a": Colour.RED},
    Point(1), [Point(2)], {"a": Point(3)}, {1, 2}, frozenset(), Path("/x"),
]  # fmt: skip


def bodies() -> Iterator[Any]:
    """Every fast-path class with plain values, odd values and wrong types in each field."""
    yield SubagentDescriptorEvent(DESCRIPTOR)
    yield InboxAccepted("msg_1", "followup", "Do task 1.", START)
    yield InboxAccepted("msg_2", "steer", "Background subagent ...", None)
    yield InboxClaimed(("msg_1",))
    yield InboxClaimed(())
    yield InboxClaimed(["msg_1", "msg_2"])  # type: ignore[arg-type]
    yield TurnStart("turn_1")
    yield TurnEnd("turn_1", "completed")
    yield TurnEnd("turn_1", "error", "boom")
    yield MessageEvent("user", "Do task 1.", "msg_1", START)
    yield MessageEvent("assistant", "done", "msg_3")
    call = ToolCall("c1", "subagent", {"prompt": "p", "n": [1, {"k": None}]})
    yield MessageEvent("assistant", "", "msg_4", tool_calls=(call, ToolCall("c2", "x")))
    yield MessageEvent("tool", "ok", "msg_5", tool_call_id="c1", structured={"id": "sub_1"})
    yield MessageEvent("tool", "no", "msg_6", tool_call_id="c1", is_error=True, structured=[1])
    yield SessionHeader("sub_1", "agent_p", 1, "subagent", 1, 0, "task", "explore", "m")
    yield SessionHeader("agent_1")
    yield PluginEvent("p", "p/t", {"a": [1, 2]})
    yield PluginEvent("p", "p/t")
    for value in ODD:
        yield SubagentDescriptorEvent(value)
        yield PluginEvent("p", "p/t", value)
        yield MessageEvent("tool", "x", "m", structured=value)
        yield MessageEvent("tool", "x", "m", source=value)
        yield InboxAccepted("m", "steer", "c", value)
        yield MessageEvent("tool", "x", "m", tool_calls=(ToolCall("c", "n", value),))
        yield MessageEvent("tool", "x", "m", tool_calls=value)
        yield InboxClaimed(value)
        yield TurnEnd("t", "error", value)
        yield TurnStart(value)
        yield SessionHeader("s", value, value, value, value, value, value, value, value)
        yield MessageEvent("tool", value, value, tool_call_id=value, is_error=value)


def outcome(unstructure: Callable[[Any], Any], body: Any) -> str:
    """What unstructuring ``body`` gives, types included (``repr``), or the error it raises."""
    try:
        return repr(unstructure(body))
    except Exception as error:
        return f"raised {type(error).__name__}: {error}"


def written(body: Any) -> dict[str, Any]:
    """``body`` written as the seventh event of a log."""
    return event_hooks.unstructure_event_fields(Event(7, body))


def flat(hook: Callable[[Any], Any]) -> Callable[[Any], dict[str, Any]]:
    """What ``written`` gives when ``hook`` unstructures the body."""
    return lambda body: {"seq": 7, "kind": body.kind, **hook(body)}


def test_the_writers_give_what_the_generated_hooks_give() -> None:
    checked: Counter[type] = Counter()
    for body in bodies():
        cls = type(body)
        generated = make_dict_unstructure_fn(cls, converter)
        if cls is SessionHeader:
            assert outcome(event_hooks.unstructure_header, body) == outcome(generated, body)
        else:
            assert outcome(written, body) == outcome(flat(generated), body)
        checked[cls] += 1
    assert set(checked) == {*event_hooks._WRITERS, SessionHeader}


def test_a_body_without_a_writer_takes_the_generated_hook() -> None:
    body = Compaction("summary", 3)
    assert Compaction not in event_hooks._WRITERS
    assert written(body) == flat(make_dict_unstructure_fn(Compaction, converter))(body)


def test_a_written_body_is_a_new_dict_holding_no_mutable_value_of_the_body() -> None:
    source = {"kind": "x", "nested": {"a": [1]}}
    body = MessageEvent("user", "hi", "m", source, structured={"list": [1]})
    out = event_hooks.unstructure_event_fields(Event(0, body))
    assert out["source"] == source and out["source"] is not source
    assert out["source"]["nested"] is not source["nested"]
    assert out["structured"]["list"] is not body.structured["list"]


@contextmanager
def cattrs_calls() -> Iterator[Counter[str]]:
    """Count the Python functions of cattrs (its package and the hooks it generates) called."""
    counted: Counter[str] = Counter()

    def profile(frame: FrameType, event: str, _arg: object) -> None:
        if event == "call":
            name = frame.f_code.co_filename
            if "cattrs" in name:
                counted[frame.f_code.co_name] += 1

    sys.setprofile(profile)
    try:
        yield counted
    finally:
        sys.setprofile(None)


def test_writing_a_childs_events_calls_no_cattrs_function() -> None:
    """A child's log is created with its header; it appends a descriptor, its start message, a
    claim, a turn's start, its messages and the turn's end; its parent a notice. Before, each went through the generated
    hooks: about 80 cattrs calls per child (an optional field, a mapping, an iterable, and a
    call per value of a loosely typed field)."""
    call = ToolCall("c1", "read", {"path": "a.txt"})
    events = [
        Event(0, SubagentDescriptorEvent(DESCRIPTOR)),
        Event(1, InboxAccepted("msg_1", "followup", "Do task 1.", START)),
        Event(2, InboxClaimed(("msg_1",))),
        Event(3, TurnStart("turn_1")),
        Event(4, MessageEvent("user", "Do task 1.", "msg_1", START)),
        Event(5, MessageEvent("assistant", "", "msg_2", tool_calls=(call,))),
        Event(6, MessageEvent("tool", "text", "msg_3", tool_call_id="c1", structured=None)),
        Event(7, MessageEvent("assistant", "done", "msg_4")),
        Event(8, TurnEnd("turn_1", "completed")),
        Event(9, InboxAccepted("msg_5", "steer", "Background subagent ...", START)),
    ]
    header = SessionHeader("sub_1", "agent_p", 1, "subagent", 1, 0, "task 1")
    expected = encode_header(header) + encode_events(events)  # configured outside the count
    with cattrs_calls() as counted:
        written = encode_header(header) + encode_events(events)
    assert written == expected
    assert counted == Counter()
