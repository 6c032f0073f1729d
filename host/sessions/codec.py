"""Encode and decode the lines of a session log.

A log is UTF-8 JSON Lines: every line is one compact JSON object ending in ``\\n``.

* Line 1, the header::

    {"format":"agent-host/session","version":1,"id":"s1","parent_session":null,
     "created_at":1732890000000000000,"origin":null,"delegation_depth":0,"seed_length":0}

* Every further line is one event, flat: ``seq`` and the body's ``kind`` first, then the
  body's own fields, exactly as the shared cattrs converter unstructures them::

    {"seq":3,"kind":"message","role":"user","content":"hi","message_id":"msg_…",…}

Values cross through the one converter in ``host.serialization`` (the ``Event`` hooks live in
``host.sessions.event_hooks``, installed by importing it here); unknown keys and unknown kinds
are rejected. JSON text is produced and parsed by ``orjson`` when it is installed (it makes
cold loads several times faster) and by the standard library otherwise; both read each
other's output.
"""

from __future__ import annotations

import gc
import importlib
import json
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from host.serialization import converter
from host.sessions.event_hooks import (
    body_structure_hooks,
    structure_event_fields,
    unstructure_event_fields,
    unstructure_header,
)
from host.sessions.model import Event, SessionHeader, SessionIdError

HEADER_FORMAT = "agent-host/session"
HEADER_VERSION = 1


class CodecError(ValueError):
    """A line that is not a valid header or event line (the message says why)."""


def _stdlib_dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _pick_backend() -> tuple[Callable[[bytes], Any], Callable[[Any], bytes], str]:
    try:
        orjson = importlib.import_module("orjson")
    except ImportError:  # pragma: no cover - depends on the environment
        return json.loads, _stdlib_dumps, "json"
    fast_dumps: Callable[[Any], bytes] = orjson.dumps

    def dumps(value: Any) -> bytes:
        try:
            return fast_dumps(value)
        except TypeError:  # e.g. ints beyond 64 bits: the stdlib encoder handles them
            return _stdlib_dumps(value)

    loads: Callable[[bytes], Any] = orjson.loads
    return loads, dumps, "orjson"


_loads, _dumps, BACKEND = _pick_backend()
"""``BACKEND`` names the JSON library in use: ``"orjson"`` or ``"json"``."""


def encode_json(value: Any) -> bytes:
    """``value`` as compact UTF-8 JSON, by the library in use (``BACKEND``)."""
    return _dumps(value)


_OPTIONAL_KEYS = ("label", "profile", "model")
"""Header keys written only when set (logs from before them have none)."""


def encode_header(header: SessionHeader) -> bytes:
    """The header line of ``header``, newline included."""
    data: dict[str, Any] = {"format": HEADER_FORMAT, "version": HEADER_VERSION}
    data.update(unstructure_header(header))
    for optional in _OPTIONAL_KEYS:
        if data[optional] is None:
            del data[optional]  # a header without one reads as it always did
    return _dumps(data) + b"\n"


def decode_header(line: bytes) -> SessionHeader:
    """Parse a header line (with or without its newline); ``CodecError`` if it is not one."""
    try:
        data = _loads(line)
    except ValueError as exc:
        raise CodecError(f"header is not JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != HEADER_FORMAT:
        raise CodecError("first line is not an agent-host session header")
    version = data.pop("version", None)
    if version != HEADER_VERSION:
        raise CodecError(f"unsupported session log version {version!r}")
    del data["format"]
    header = _plain_header(data)
    if header is not None:
        return header
    try:
        return converter.structure(data, SessionHeader)
    except Exception as exc:
        raise CodecError(f"invalid session header: {exc}") from None


_HEADER_KEYS = frozenset(
    ("id", "parent_session", "created_at", "origin", "delegation_depth", "seed_length")
)


def _plain_header(data: dict[str, Any]) -> SessionHeader | None:
    """The header of a complete, well-typed header object, built without the converter (a
    listing decodes thousands); ``None`` for anything else, which the converter then
    structures or refuses with its own message."""
    label, profile, model = data.get("label"), data.get("profile"), data.get("model")
    if data.keys() - set(_OPTIONAL_KEYS) != _HEADER_KEYS:
        return None
    sid, parent, created = data["id"], data["parent_session"], data["created_at"]
    origin, depth, seed = data["origin"], data["delegation_depth"], data["seed_length"]
    if (
        type(sid) is not str
        or type(created) is not int
        or type(depth) is not int
        or type(seed) is not int
        or (parent is not None and type(parent) is not str)
        or (origin is not None and type(origin) is not str)
        or (label is not None and type(label) is not str)
        or (profile is not None and type(profile) is not str)
        or (model is not None and type(model) is not str)
    ):
        return None
    try:
        return SessionHeader(sid, parent, created, origin, depth, seed, label, profile, model)
    except SessionIdError:  # a hostile id: the converter's refusal says so
        return None


def prepare_decoding() -> None:
    """Generate the header and event decoders now: a one-time cost (about 30 ms) that the
    first read of a log would otherwise pay. Persistence runs it off the event loop."""
    body_structure_hooks()
    converter.get_structure_hook(SessionHeader)


def encode_event(event: Event) -> bytes:
    """One event line, newline included. Raises (writing nothing) if it cannot be encoded."""
    return _dumps(unstructure_event_fields(event)) + b"\n"


def encode_events(events: Iterable[Event]) -> bytes:
    """Several event lines joined: encoded completely before anything is returned."""
    return b"".join([_dumps(unstructure_event_fields(e)) + b"\n" for e in events])


def decode_event(line: bytes) -> Event:
    """Parse one event line; ``CodecError`` if it is not a valid event."""
    try:
        data = _loads(line)
        if type(data) is not dict:
            raise TypeError("an event line is a JSON object")
        return structure_event_fields(data)
    except Exception as exc:
        raise CodecError(f"invalid event line: {exc}") from None


def decode_event_lines(lines: Sequence[bytes], first_seq: int = 0) -> tuple[list[Event], int]:
    """Decode ``lines`` in order while each is a valid event with the next ``seq``.

    Returns the events and the index of the first line that failed (``len(lines)`` if none
    did). The ``seq`` of line ``i`` must be ``first_seq + i``.
    """
    if len(lines) >= _GC_PAUSE_MIN_LINES:
        with _gc_paused():
            return _decode_lines(lines, first_seq)
    return _decode_lines(lines, first_seq)


_GC_PAUSE_MIN_LINES = 2000
_gc_lock = threading.Lock()
_gc_pausers = 0
_gc_was_enabled = False


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while a bulk decode allocates (it creates no cycles).

    Building 100k frozen attrs objects otherwise triggers dozens of full-heap collections,
    which costs about a third of a cold load. Nested and concurrent pauses are counted.
    """
    global _gc_pausers, _gc_was_enabled
    with _gc_lock:
        if _gc_pausers == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pausers += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pausers -= 1
            if _gc_pausers == 0 and _gc_was_enabled:
                gc.enable()


def _decode_lines(lines: Sequence[bytes], first_seq: int) -> tuple[list[Event], int]:
    """``structure_event_fields`` inlined over many lines (same checks, same hooks)."""
    events: list[Event] = []
    append = events.append
    loads = _loads
    hooks = body_structure_hooks()
    make = Event
    dict_ = dict
    int_ = int
    seq = first_seq
    for line in lines:
        try:
            data = loads(line)
            if type(data) is not dict_:
                break
            got = data.pop("seq", None)
            if type(got) is not int_ or got != seq:
                break
            entry = hooks[data.get("kind")]  # type: ignore[index]
            append(make(seq, entry[1](data, entry[0])))
        except Exception:
            break
        seq += 1
    return events, len(events)
