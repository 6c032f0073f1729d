"""The hand-written structure hooks accept exactly what the generated cattrs hooks accept."""

from __future__ import annotations

import copy
import json
from typing import Any, get_type_hints

import attrs
import pytest
from cattrs.gen import make_dict_structure_fn, override

from host.serialization import converter
from host.sessions import event_hooks
from host.sessions.codec import (
    HEADER_FORMAT,
    HEADER_VERSION,
    CodecError,
    decode_event_lines,
    decode_header,
    encode_event,
    encode_header,
)
from host.sessions.model import (
    Event,
    InboxAccepted,
    MessageEvent,
    PluginEvent,
    SessionHeader,
    ToolCall,
    TurnEnd,
    TurnStart,
)

GOOD: list[tuple[type, dict[str, Any]]] = [
    (
        MessageEvent,
        {
            "role": "assistant",
            "content": "x",
            "message_id": "m",
            "source": None,
            "tool_calls": [{"id": "c", "name": "n", "arguments": {"a": 1}}],
            "tool_call_id": None,
            "is_error": False,
            "structured": {"k": [1]},
            "kind": "message",
        },
    ),
    (TurnStart, {"turn_id": "t", "kind": "turn/start"}),
    (TurnEnd, {"turn_id": "t", "stop_reason": "error", "error": "boom", "kind": "turn/end"}),
    (
        InboxAccepted,
        {
            "message_id": "m",
            "delivery": "steer",
            "content": "c",
            "source": {"kind": "user"},
            "kind": "inbox/accepted",
        },
    ),
    (PluginEvent, {"plugin": "p", "type": "p/t", "data": None, "kind": "plugin"}),
    (ToolCall, {"id": "c", "name": "n", "arguments": {}}),
]

ODD_VALUES: list[Any] = [None, 1, True, 1.5, "", "user", "zzz", [], {}, ["x"], [{}], ()]


def generated(cls: type) -> Any:
    """A hook generated the way the model registers its strict ones (not registered)."""
    hints = get_type_hints(cls)
    overrides = {
        name: override(struct_hook=event_hooks._FAST_FIELD_HOOKS[hint])
        for name, hint in hints.items()
        if hint in event_hooks._FAST_FIELD_HOOKS
    }
    return make_dict_structure_fn(
        cls,
        converter,
        _cattrs_forbid_extra_keys=True,
        _cattrs_detailed_validation=False,
        **overrides,  # type: ignore[arg-type]
    )


def outcome(hook: Any, data: dict[str, Any], cls: type) -> Any:
    try:
        return ("ok", hook(copy.deepcopy(data), cls))
    except Exception as exc:  # comparing failures
        return ("error", type(exc))


def variants(data: dict[str, Any]) -> list[dict[str, Any]]:
    out = [data]
    for key in data:
        out.append({k: v for k, v in data.items() if k != key})  # missing key
        for value in ODD_VALUES:
            out.append({**data, key: value})
    out.append({**data, "extra": 1})
    return out


@pytest.mark.parametrize(("cls", "data"), GOOD, ids=lambda v: getattr(v, "__name__", ""))
def test_fast_hooks_match_generated_hooks(cls: type, data: dict[str, Any]) -> None:
    fast = converter.get_structure_hook(cls)
    slow = generated(cls)
    for variant in variants(data):
        got, want = outcome(fast, variant, cls), outcome(slow, variant, cls)
        fresh_id = "message_id" not in variant and "message_id" in attrs_names(cls)
        if want[0] == "ok" and got[0] == "ok" and fresh_id:
            # the default factory makes a fresh id each time
            got, want = ("ok", type(got[1])), ("ok", type(want[1]))
        assert got == want, variant


def attrs_names(cls: type) -> set[str]:
    return {f.name for f in attrs.fields(cls)}


def test_decode_event_lines_checks_seq_exactly() -> None:
    line = encode_event(Event(0, TurnStart(turn_id="t")))
    assert len(decode_event_lines([line])[0]) == 1
    for bad in (b'{"seq":true,"kind":"turn/start","turn_id":"t"}', b'{"seq":0.0,"kind":"x"}'):
        assert decode_event_lines([bad]) == ([], 0)
    shifted = encode_event(Event(1, TurnStart(turn_id="t")))
    assert decode_event_lines([line, line]) == ([Event(0, TurnStart(turn_id="t"))], 1)
    assert len(decode_event_lines([line, shifted])[0]) == 2
    assert decode_event_lines([b'{"seq":0,"kind":["list"]}']) == ([], 0)


HEADERS: list[dict[str, Any]] = [
    {"id": "s1", "parent_session": None, "created_at": 5, "origin": None,
     "delegation_depth": 0, "seed_length": 0},
    {"id": "c_1", "parent_session": "root-0", "created_at": 1_732_890_000_000_000_000,
     "origin": "subagent", "delegation_depth": 2, "seed_length": 7},
    {"id": "s1", "parent_session": None, "created_at": True, "origin": None,
     "delegation_depth": 0, "seed_length": 0},
    {"id": "s1", "parent_session": None, "created_at": 5.0, "origin": None,
     "delegation_depth": 0, "seed_length": 0},
    {"id": "s1", "parent_session": None, "created_at": "5", "origin": None,
     "delegation_depth": 0, "seed_length": 0},
    {"id": "s1", "parent_session": 3, "created_at": 5, "origin": None,
     "delegation_depth": 0, "seed_length": 0},
    {"id": "../x", "parent_session": None, "created_at": 5, "origin": None,
     "delegation_depth": 0, "seed_length": 0},
    {"id": "s1", "created_at": 5},
    {"id": "s1", "parent_session": None, "created_at": 5, "origin": None,
     "delegation_depth": 0, "seed_length": 0, "extra": 1},
    {"id": "s1", "parent_session": None, "created_at": 5, "origin": None,
     "delegation_depth": 0, "seed_length": 0, "label": "alice"},
    {"id": "s1", "parent_session": None, "created_at": 5, "origin": None,
     "delegation_depth": 0, "seed_length": 0, "label": None},
    {"id": "s1", "parent_session": None, "created_at": 5, "origin": None,
     "delegation_depth": 0, "seed_length": 0, "label": 7},
    {"id": "s1", "parent_session": None, "created_at": 5, "origin": None,
     "delegation_depth": 0, "seed_length": 0, "label": "user", "profile": "reviewer"},
    {"id": "s1", "parent_session": None, "created_at": 5, "origin": None,
     "delegation_depth": 0, "seed_length": 0, "profile": 7},
    {"id": "s1", "parent_session": None, "created_at": 5, "origin": None,
     "delegation_depth": 0, "seed_length": 0, "profile": "reviewer", "model": "local"},
    {"id": "s1", "parent_session": None, "created_at": 5, "origin": None,
     "delegation_depth": 0, "seed_length": 0, "model": 7},
]


@pytest.mark.parametrize("data", HEADERS, ids=range(len(HEADERS)))
def test_header_fast_path_matches_the_converter(data: dict[str, Any]) -> None:
    """``decode_header`` builds well-typed headers itself: same result, same refusals."""
    line = json.dumps({"format": HEADER_FORMAT, "version": HEADER_VERSION, **data}).encode()
    try:
        expected: object = converter.structure(copy.deepcopy(data), SessionHeader)
    except Exception:
        expected = CodecError
    try:
        got: object = decode_header(line)
    except CodecError:
        got = CodecError
    assert got == expected


def test_a_label_is_kept_and_a_header_without_one_is_written_as_before() -> None:
    labelled = SessionHeader("s1", created_at=5, label="alice")
    assert decode_header(encode_header(labelled)) == labelled
    plain = json.loads(encode_header(SessionHeader("s1", created_at=5)))
    assert "label" not in plain  # older readers and logs: the same header line


def test_a_roots_profile_is_kept_and_a_header_without_one_is_written_as_before() -> None:
    started = SessionHeader("s1", created_at=5, label="user", profile="reviewer")
    assert decode_header(encode_header(started)) == started
    plain = json.loads(encode_header(SessionHeader("s1", created_at=5, label="user")))
    assert "profile" not in plain


def test_a_roots_own_model_is_kept_and_a_header_without_one_is_written_as_before() -> None:
    started = SessionHeader("s1", created_at=5, label="user", profile="reviewer", model="local")
    assert decode_header(encode_header(started)) == started
    plain = json.loads(encode_header(SessionHeader("s1", created_at=5, profile="reviewer")))
    assert "model" not in plain
