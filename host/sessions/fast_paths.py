"""Hand-written fast paths for structuring event bodies, in front of cattrs' generated hooks.

Cold loads structure one body per log line, and cattrs' generated hooks (a function call per
field, a kwargs dict, a key-set difference) cost more than parsing the JSON. The builders here
take the shape the encoder writes — every field present (``omit_if_default=False``), each value
of the exact JSON type the strict generated hooks demand — and return None for anything else,
which then goes to the generated hook unchanged: accepted values, results and errors are
exactly the generated hook's. ``install`` puts them in front of those hooks on a converter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, get_args

import attrs
import cattrs

from host.sessions.model import (
    Delivery,
    InboxAccepted,
    MessageEvent,
    PluginEvent,
    Role,
    StopReason,
    ToolCall,
    TurnEnd,
    TurnStart,
)

_ROLES = frozenset(get_args(Role))
_STOP_REASONS = frozenset(get_args(StopReason))
_DELIVERIES = frozenset(get_args(Delivery))


def field_names(cls: type) -> frozenset[str]:
    """The names of an attrs class's fields."""
    return frozenset(field.name for field in attrs.fields(cls))


_CALL_NAMES = field_names(ToolCall)


def _tool_call(d: dict[str, Any]) -> ToolCall | None:
    i, n, a = d["id"], d["name"], d["arguments"]
    if type(i) is str and type(n) is str and type(a) is dict:
        return ToolCall(i, n, a)
    return None


def _tool_calls(calls: Any) -> tuple[ToolCall, ...] | None:
    """A message's ``tool_calls`` list in the encoder's shape, or None."""
    if type(calls) is not list:
        return None
    built = []
    for c in calls:
        if type(c) is not dict or len(c) != 3 or c.keys() != _CALL_NAMES:
            return None
        one = _tool_call(c)
        if one is None:
            return None
        built.append(one)
    return tuple(built)


def _message(d: dict[str, Any]) -> MessageEvent | None:
    role, content, mid, source = d["role"], d["content"], d["message_id"], d["source"]
    call_id, is_error = d["tool_call_id"], d["is_error"]
    if not (
        type(role) is str
        and role in _ROLES
        and type(content) is str
        and type(mid) is str
        and (source is None or type(source) is dict)
        and (call_id is None or type(call_id) is str)
        and type(is_error) is bool
        and d["kind"] == "message"
        and type(d["kind"]) is str
    ):
        return None
    tool_calls = _tool_calls(d["tool_calls"])
    if tool_calls is None:
        return None
    return MessageEvent(
        role,  # type: ignore[arg-type]
        content,
        mid,
        source,
        tool_calls,
        call_id,
        is_error,
        d["structured"],
    )


def _turn_start(d: dict[str, Any]) -> TurnStart | None:
    turn = d["turn_id"]
    if type(turn) is str and d["kind"] == "turn/start" and type(d["kind"]) is str:
        return TurnStart(turn)
    return None


def _turn_end(d: dict[str, Any]) -> TurnEnd | None:
    turn, reason, error = d["turn_id"], d["stop_reason"], d["error"]
    if (
        type(turn) is str
        and type(reason) is str
        and reason in _STOP_REASONS
        and (error is None or type(error) is str)
        and d["kind"] == "turn/end"
        and type(d["kind"]) is str
    ):
        return TurnEnd(turn, reason, error)  # type: ignore[arg-type]
    return None


def _inbox_accepted(d: dict[str, Any]) -> InboxAccepted | None:
    mid, delivery, content, source = d["message_id"], d["delivery"], d["content"], d["source"]
    if (
        type(mid) is str
        and type(delivery) is str
        and delivery in _DELIVERIES
        and type(content) is str
        and (source is None or type(source) is dict)
        and d["kind"] == "inbox/accepted"
        and type(d["kind"]) is str
    ):
        return InboxAccepted(mid, delivery, content, source)  # type: ignore[arg-type]
    return None


def _plugin_event(d: dict[str, Any]) -> PluginEvent | None:
    plugin, kind_type = d["plugin"], d["type"]
    if (
        type(plugin) is str
        and type(kind_type) is str
        and d["kind"] == "plugin"
        and type(d["kind"]) is str
    ):
        return PluginEvent(plugin, kind_type, d["data"])
    return None


_BUILDERS: dict[type, Callable[[dict[str, Any]], Any]] = {
    ToolCall: _tool_call,
    MessageEvent: _message,
    TurnStart: _turn_start,
    TurnEnd: _turn_end,
    InboxAccepted: _inbox_accepted,
    PluginEvent: _plugin_event,
}


def install(converter: cattrs.Converter) -> None:
    """Put each builder in front of its class's structure hook on ``converter`` (those hooks
    must be registered already: they take whatever a builder does not)."""
    for cls, build in _BUILDERS.items():
        converter.register_structure_hook(cls, _fast_hook(converter, cls, build))


def _fast_hook(
    converter: cattrs.Converter, cls: type, build: Callable[[dict[str, Any]], Any]
) -> Callable[[Any, Any], Any]:
    slow = converter.get_structure_hook(cls)
    names = field_names(cls)
    count = len(names)

    def hook(data: Any, _type: Any) -> Any:
        if type(data) is dict and len(data) == count and data.keys() == names:
            made = build(data)
            if made is not None:
                return made
        return slow(data, _type)

    hook.__name__ = f"structure_{cls.__name__}_fast"
    return hook
