"""``MessageSource``: the one type for subagent message sources, and the JSON shape it keeps.

Sources are stored in session logs and read back (``host.approvals.records.origin_of`` reads
``tool_call_id``), so ``as_dict`` is pinned key for key, in order.
"""

from __future__ import annotations

import json
from typing import get_args

import pytest

from host.subagents.types import ChildRequest, MessageSource, SourceKind


@pytest.mark.parametrize("kind", get_args(SourceKind))
def test_a_source_is_kind_then_sender(kind: SourceKind) -> None:
    source = MessageSource(kind, "s1").as_dict()
    assert json.dumps(source) == json.dumps({"kind": kind, "sender_session_id": "s1"})


def test_the_kinds_are_the_designs() -> None:
    assert set(get_args(SourceKind)) == {
        "coordinator",
        "subagent-start",
        "subagent-report",
        "subagent-settled",
    }


def test_a_start_source_carries_the_parents_tool_call_last() -> None:
    with_call = ChildRequest("go", parent_tool_call_id="call-1").start_source("p1")
    assert list(with_call.items()) == [
        ("kind", "subagent-start"),
        ("sender_session_id", "p1"),
        ("tool_call_id", "call-1"),
    ]
    assert ChildRequest("go").start_source("p1") == {
        "kind": "subagent-start",
        "sender_session_id": "p1",
    }
