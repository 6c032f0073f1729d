"""How session events cross the host's one cattrs converter: strict, fast, built on first use.

Importing this module installs these hooks; the codec (``host.sessions.codec``), through which
events are read and written, imports it, and so does anything else that structures events. The
generated cattrs hooks are strict (strings must be strings); hand-written fast paths
(``host.sessions.fast_paths``) take the exact shape the encoder writes and hand anything else to
the generated hook, so accepted values and errors are the same; and all of it is generated on
first use, not at import, so commands that never touch an event do not pay for it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, get_args, get_type_hints

import attrs
from cattrs.gen import make_dict_structure_fn, override
from cattrs.strategies import configure_tagged_union

from host.serialization import converter
from host.sessions import fast_paths
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
_unhooks: dict[type, Callable[[Any], dict[str, Any]]] = {}


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
    cls = type(event.body)
    hook = _unhooks.get(cls)
    if hook is None:
        _configure()
        hook = _unhooks[cls] = converter.get_unstructure_hook(cls)
    out: dict[str, Any] = {"seq": event.seq, "kind": event.body.kind}
    out.update(hook(event.body))
    return out


def unstructure_header(header: SessionHeader) -> dict[str, Any]:
    """The JSON form of a session header: every field (the codec writes the header line)."""
    hook = _unhooks.get(SessionHeader)
    if hook is None:
        _configure()
        hook = _unhooks[SessionHeader] = converter.get_unstructure_hook(SessionHeader)
    return hook(header)


def _structure_event(data: Any, _cls: Any) -> Event:
    if not isinstance(data, dict):
        raise TypeError(f"an event is a JSON object, not {type(data).__name__}")
    return structure_event_fields(dict(data))


converter.register_structure_hook(Event, _structure_event)
converter.register_unstructure_hook(Event, unstructure_event_fields)
