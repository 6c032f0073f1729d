"""How session events cross the host's one cattrs converter: strict, fast, built on first use.

Importing this module installs these hooks; the codec (``host.sessions.codec``), through which
events are read and written, imports it, and so does anything else that structures events. The
generated cattrs hooks are strict (strings must be strings); hand-written fast paths
(``host.sessions.fast_paths``) take the exact shape the encoder writes and hand anything else to
the generated hook, so accepted values and errors are the same; and all of it is generated on
first use, not at import, so commands that never touch an event do not pay for it. Writing an
event or a header (``unstructure_event_fields``, ``unstructure_header``) builds the JSON form
by hand for the plain values every child writes, and takes the generated hook for the rest:
the same dict either way.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, get_args, get_type_hints

import attrs
from cattrs.gen import make_dict_structure_fn, override
from cattrs.strategies import configure_tagged_union

from host.serialization import converter
from host.sessions import fast_paths, model
from host.sessions.model import EVENT_BODY_TYPES, Event, EventBody, SessionHeader, ToolCall


def _kind_tag(cls: type) -> str:
    tag: str = attrs.fields(cls).kind.default
    return tag


def _check(kind: type, optional: bool) -> Callable[[Any, Any], Any]:
    def check(value: Any, _type: Any) -> Any:
        if type(value) is kind or (optional and value is None):
            return value
        raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")

    return check


_FAST_FIELD_HOOKS: dict[Any, Callable[[Any, Any], Any]] = {
    str: _check(str, False),
    str | None: _check(str, True),
    dict[str, Any]: _check(dict, False),
    dict[str, Any] | None: _check(dict, True),
    bool: _check(bool, False),
}


def _register_body_hooks() -> None:
    """Strict, fast structure hooks for the event bodies (registered on the shared converter).

    Strings must be strings, JSON objects are taken as parsed (not copied); the rest is cattrs'
    default handling, with unknown keys rejected.
    """
    for cls in (ToolCall, *get_args(EventBody)):
        hints = get_type_hints(cls)
        overrides = {
            name: override(struct_hook=_FAST_FIELD_HOOKS[hint])
            for name, hint in hints.items()
            if hint in _FAST_FIELD_HOOKS
        }
        hook = make_dict_structure_fn(
            cls,
            converter,
            _cattrs_forbid_extra_keys=True,
            _cattrs_detailed_validation=False,
            **overrides,  # type: ignore[arg-type]
        )
        converter.register_structure_hook(cls, hook)


_configure_lock = threading.Lock()
_configured = False
_configurer: int | None = None


def _configure() -> None:
    """Register the event hooks on the shared converter (once, on first use).

    Generating them (cattrs compiles a function per class) costs tens of milliseconds, which
    commands that never touch an event (``agent-host plugins``) should not pay at import.
    While one thread configures, the lazy factory stands aside for it (cattrs' defaults
    apply to the member classes the tagged union asks for); other threads wait here.
    """
    global _configured, _configurer
    if _configured:
        return
    with _configure_lock:
        if _configured:
            return
        _configurer = threading.get_ident()
        try:
            configure_tagged_union(EventBody, converter, tag_name="kind", tag_generator=_kind_tag)
            _register_body_hooks()
            fast_paths.install(converter)
            _configured = True
        finally:
            _configurer = None


_LAZY_TYPES: frozenset[Any] = frozenset({EventBody, ToolCall, *get_args(EventBody)})


def _is_lazy(cls: Any) -> bool:
    if _configured or _configurer == threading.get_ident():
        return False
    try:
        return cls in _LAZY_TYPES
    except TypeError:  # an unhashable type form
        return False


def _lazy_structure(cls: Any) -> Callable[[Any, Any], Any]:
    _configure()  # registers the real hooks directly, which take precedence from now on
    return converter.get_structure_hook(cls)


def _lazy_unstructure(cls: Any) -> Callable[[Any], Any]:
    _configure()
    return converter.get_unstructure_hook(cls)


converter.register_structure_hook_factory(_is_lazy, _lazy_structure)
converter.register_unstructure_hook_factory(_is_lazy, _lazy_unstructure)

_body_hooks: dict[str, tuple[type[EventBody], Callable[[Any, Any], Any]]] = {}
_unhooks: dict[type, Callable[[Any], dict[str, Any]]] = {}  # the generated ones


def body_structure_hooks() -> dict[str, tuple[type[EventBody], Callable[[Any, Any], Any]]]:
    """Every event kind's body class and its structure hook on the shared converter."""
    _configure()
    if len(_body_hooks) < len(EVENT_BODY_TYPES):
        for kind, cls in EVENT_BODY_TYPES.items():
            _body_hooks[kind] = (cls, converter.get_structure_hook(cls))
    return _body_hooks


def structure_event_fields(data: dict[str, Any]) -> Event:
    """Build an ``Event`` from its flat JSON form, consuming ``data`` (it is mutated).

    The flat form is the body's fields (``kind`` included) plus ``"seq"``. Raises ``ValueError``,
    ``KeyError``, ``TypeError`` or a cattrs error when ``data`` is not a valid event.
    """
    _configure()
    seq = data.pop("seq")
    if type(seq) is not int or seq < 0:
        raise ValueError(f"bad event seq {seq!r}")
    kind = data.get("kind")
    entry = _body_hooks.get(kind)  # type: ignore[arg-type]
    if entry is None:
        cls = EVENT_BODY_TYPES.get(kind)  # type: ignore[arg-type]
        if cls is None:
            raise ValueError(f"unknown event kind {kind!r}")
        entry = _body_hooks[_kind_tag(cls)] = (cls, converter.get_structure_hook(cls))
    return Event(seq, entry[1](data, entry[0]))


def unstructure_event_fields(event: Event) -> dict[str, Any]:
    """The flat JSON form of ``event``: ``{"seq": …, "kind": …, <body fields>}``."""
    body = event.body
    cls = type(body)
    out: dict[str, Any] = {"seq": event.seq, "kind": body.kind}
    write = _WRITERS.get(cls)
    if write is not None:
        try:
            out.update(write(body))
            return out
        except _NotPlain:
            pass
    hook = _unhooks.get(cls)
    if hook is None:
        _configure()
        hook = _unhooks[cls] = converter.get_unstructure_hook(cls)
    out.update(hook(body))
    return out


def unstructure_header(header: SessionHeader) -> dict[str, Any]:
    """The JSON form of a session header: every field, as the generated hook gives it (each
    field is a string, an integer or None; the codec writes the header line)."""
    return {
        "id": header.id,
        "parent_session": header.parent_session,
        "created_at": header.created_at,
        "origin": header.origin,
        "delegation_depth": header.delegation_depth,
        "seed_length": header.seed_length,
        "label": header.label,
        "profile": header.profile,
        "model": header.model,
    }


# -- writing the bodies every child appends, by hand -------------------------------------------
# The generated hooks make a call per optional field, per mapping and iterable, and a dispatch
# per value of a loosely typed field: about 80 calls per child. The writers below give the same
# dict (a new one, every field, a value of unknown type as the converter gives it by its class)
# when those fields hold plain JSON values, and raise ``_NotPlain`` for anything else, which
# ``unstructure_event_fields`` then hands to the generated hook.


class _NotPlain(Exception):
    """A value the writers leave to the generated hook."""


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _plain(value: Any) -> Any:
    """``value`` as the converter unstructures a value of unknown type (by its class), for a
    plain JSON value (scalars, and lists, tuples and string-keyed dicts of them)."""
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


def _mapping(value: Any) -> dict[str, Any]:
    """A ``dict[str, Any]`` field's value as the generated hook gives it (a new dict)."""
    if type(value) is not dict:
        raise _NotPlain
    return {key: item if type(item) in _SCALARS else _plain(item) for key, item in value.items()}


def _calls(calls: Any) -> list[dict[str, Any]]:
    if type(calls) is not tuple and type(calls) is not list:
        raise _NotPlain
    out = []
    for call in calls:
        if type(call) is not ToolCall:
            raise _NotPlain
        out.append({"id": call.id, "name": call.name, "arguments": _mapping(call.arguments)})
    return out


def _message(m: model.MessageEvent) -> dict[str, Any]:
    source, structured = m.source, m.structured
    return {
        "role": m.role,
        "content": m.content,
        "message_id": m.message_id,
        "source": None if source is None else _mapping(source),
        "tool_calls": [] if m.tool_calls == () else _calls(m.tool_calls),
        "tool_call_id": m.tool_call_id,
        "is_error": m.is_error,
        "structured": structured if type(structured) in _SCALARS else _plain(structured),
        "kind": m.kind,
    }


def _accepted(a: model.InboxAccepted) -> dict[str, Any]:
    source = a.source
    return {
        "message_id": a.message_id,
        "delivery": a.delivery,
        "content": a.content,
        "source": None if source is None else _mapping(source),
        "kind": a.kind,
    }


def _claimed(c: model.InboxClaimed) -> dict[str, Any]:
    ids: Any = c.message_ids
    if type(ids) is not tuple and type(ids) is not list:
        raise _NotPlain
    return {"message_ids": list(ids), "kind": c.kind}


def _turn_start(t: model.TurnStart) -> dict[str, Any]:
    return {"turn_id": t.turn_id, "kind": t.kind}


def _turn_end(t: model.TurnEnd) -> dict[str, Any]:
    return {"turn_id": t.turn_id, "stop_reason": t.stop_reason, "error": t.error, "kind": t.kind}


def _descriptor(d: model.SubagentDescriptorEvent) -> dict[str, Any]:
    return {"descriptor": _plain(d.descriptor), "kind": d.kind}


def _plugin(p: model.PluginEvent) -> dict[str, Any]:
    return {"plugin": p.plugin, "type": p.type, "data": _plain(p.data), "kind": p.kind}


_WRITERS: dict[type, Callable[[Any], dict[str, Any]]] = {
    model.MessageEvent: _message,
    model.InboxAccepted: _accepted,
    model.InboxClaimed: _claimed,
    model.TurnStart: _turn_start,
    model.TurnEnd: _turn_end,
    model.SubagentDescriptorEvent: _descriptor,
    model.PluginEvent: _plugin,
}


def _structure_event(data: Any, _cls: Any) -> Event:
    if not isinstance(data, dict):
        raise TypeError(f"an event is a JSON object, not {type(data).__name__}")
    return structure_event_fields(dict(data))


converter.register_structure_hook(Event, _structure_event)
converter.register_unstructure_hook(Event, unstructure_event_fields)
