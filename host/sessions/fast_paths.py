"""Hand-written fast paths for event bodies, in front of cattrs' generated hooks.

Cold loads structure one body per log line, and cattrs' generated hooks (a function call per
field, a kwargs dict, a key-set difference) cost more than parsing the JSON. The builders here
take the shape the encoder writes — every field present (``omit_if_default=False``), each value
of the exact JSON type the strict generated hooks demand — and return None for anything else,
which then goes to the generated hook unchanged: accepted values, results and errors are
exactly the generated hook's. ``install`` puts them in front of those hooks on a converter.

Writing goes the other way, once per appended event (several per child) and per new log's
header: the unstructurers here give what the generated hook gives — a new dict, every field, a
value of unknown type unstructured by its class — for bodies whose loosely typed fields hold
plain JSON values (strings, numbers, booleans, None, and lists, tuples and string-keyed dicts
of them), without a function call per field and per value; any other value sends the body to
the generated hook.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, get_args

import attrs
import cattrs

from host.sessions.model import (
    Delivery,
    InboxAccepted,
    InboxClaimed,
    MessageEvent,
    PluginEvent,
    Role,
    SessionHeader,
    StopReason,
    SubagentDescriptorEvent,
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


class _NotPlain(Exception):
    """A value the fast unstructurers leave to the generated hook."""


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _plain(value: Any) -> Any:
    """``value`` as the converter unstructures a value of unknown type (by its class), for a
    plain JSON value; ``_NotPlain`` for anything else."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is dict:
        out = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _NotPlain
            out[key] = item if type(item) in _SCALARS else _plain(item)
        return out
    if kind is list or kind is tuple:
        return [item if type(item) in _SCALARS else _plain(item) for item in value]
    raise _NotPlain


def _mapping(value: Any) -> Any:
    """A ``dict[str, Any] | None`` field as the generated hook gives it (a new dict)."""
    if value is None:
        return None
    if type(value) is not dict:
        raise _NotPlain
    return {key: item if type(item) in _SCALARS else _plain(item) for key, item in value.items()}


def _items(values: Any) -> Any:
    """A ``tuple[...]`` field's values as the generated hook iterates them."""
    if type(values) is not tuple and type(values) is not list:
        raise _NotPlain
    return values


def _calls(calls: Any) -> list[dict[str, Any]]:
    out = []
    for call in _items(calls):
        if type(call) is not ToolCall or type(call.arguments) is not dict:
            raise _NotPlain
        out.append({"id": call.id, "name": call.name, "arguments": _mapping(call.arguments)})
    return out


def _unstructure_message(m: MessageEvent) -> dict[str, Any]:
    structured = m.structured
    return {
        "role": m.role,
        "content": m.content,
        "message_id": m.message_id,
        "source": _mapping(m.source),
        "tool_calls": _calls(m.tool_calls),
        "tool_call_id": m.tool_call_id,
        "is_error": m.is_error,
        "structured": structured if type(structured) in _SCALARS else _plain(structured),
        "kind": m.kind,
    }


def _unstructure_accepted(a: InboxAccepted) -> dict[str, Any]:
    return {
        "message_id": a.message_id,
        "delivery": a.delivery,
        "content": a.content,
        "source": _mapping(a.source),
        "kind": a.kind,
    }


def _unstructure_claimed(c: InboxClaimed) -> dict[str, Any]:
    return {"message_ids": list(_items(c.message_ids)), "kind": c.kind}


def _unstructure_turn_start(s: TurnStart) -> dict[str, Any]:
    return {"turn_id": s.turn_id, "kind": s.kind}


def _unstructure_turn_end(e: TurnEnd) -> dict[str, Any]:
    return {"turn_id": e.turn_id, "stop_reason": e.stop_reason, "error": e.error, "kind": e.kind}


def _unstructure_descriptor(d: SubagentDescriptorEvent) -> dict[str, Any]:
    return {"descriptor": _plain(d.descriptor), "kind": d.kind}


def _unstructure_plugin(p: PluginEvent) -> dict[str, Any]:
    return {"plugin": p.plugin, "type": p.type, "data": _plain(p.data), "kind": p.kind}


def _unstructure_header(h: SessionHeader) -> dict[str, Any]:
    return {
        "id": h.id,
        "parent_session": h.parent_session,
        "created_at": h.created_at,
        "origin": h.origin,
        "delegation_depth": h.delegation_depth,
        "seed_length": h.seed_length,
        "label": h.label,
        "profile": h.profile,
        "model": h.model,
    }


_UNSTRUCTURERS: dict[type, Callable[[Any], dict[str, Any]]] = {
    MessageEvent: _unstructure_message,
    InboxAccepted: _unstructure_accepted,
    InboxClaimed: _unstructure_claimed,
    TurnStart: _unstructure_turn_start,
    TurnEnd: _unstructure_turn_end,
    SubagentDescriptorEvent: _unstructure_descriptor,
    PluginEvent: _unstructure_plugin,
    SessionHeader: _unstructure_header,
}


def install(converter: cattrs.Converter) -> None:
    """Put each builder and unstructurer in front of its class's hook on ``converter`` (those
    hooks must be registered already: they take whatever a fast path does not)."""
    for cls, build in _BUILDERS.items():
        converter.register_structure_hook(cls, _fast_hook(converter, cls, build))
    for cls, unstructure in _UNSTRUCTURERS.items():
        converter.register_unstructure_hook(cls, _fast_unhook(converter, cls, unstructure))


def _fast_unhook(
    converter: cattrs.Converter, cls: type, unstructure: Callable[[Any], dict[str, Any]]
) -> Callable[[Any], dict[str, Any]]:
    slow = converter.get_unstructure_hook(cls)

    def hook(value: Any) -> dict[str, Any]:
        try:
            return unstructure(value)
        except _NotPlain:
            result: dict[str, Any] = slow(value)
            return result

    hook.__name__ = f"unstructure_{cls.__name__}_fast"
    return hook


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
