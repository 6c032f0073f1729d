"""``PluginRecord`` owns its state changes: fail, activated, deactivated, block, snapshots."""

from __future__ import annotations

from host.plugins.discovery import PluginCandidate
from host.plugins.record import PluginRecord
from host.plugins.selection import BLOCKED_BY_SELECTION, Selection


def record() -> PluginRecord:
    return PluginRecord(PluginCandidate(name="p", load=lambda: None, entry_point="p"))


def test_failing_keeps_the_exception_and_its_one_line() -> None:
    made = record()
    error = ValueError("bad\nsecond line")
    made.fail(error)
    assert (made.state, made.error, made.exception) == ("failed", "ValueError: bad", error)
    made.fail("the server died")
    assert (made.state, made.error, made.exception) == ("failed", "the server died", None)
    made.activated()
    assert (made.state, made.error, made.exception) == ("active", None, None)


def test_blocking_says_why_in_one_place() -> None:
    made = record()
    made.block()
    assert (made.state, made.error) == ("blocked", BLOCKED_BY_SELECTION)
    assert Selection(block=frozenset({"p"})).blocked_reason("p", builtin=False) == made.error
    made.deactivated()
    assert (made.state, made.error) == ("inactive", None)


def test_a_snapshot_puts_back_the_object_and_what_came_with_it() -> None:
    made = record()
    made.obj, made.requires, made.uses, made.config = "v1", ("a",), ("b",), {"k": 1}
    made.hooks = frozenset({"activate"})
    saved = made.snapshot()
    made.obj, made.requires, made.uses, made.config, made.hooks = "v2", (), (), None, frozenset()
    made.restore(saved)
    assert (made.obj, made.requires, made.uses, made.config, made.hooks) == (
        "v1",
        ("a",),
        ("b",),
        {"k": 1},
        frozenset({"activate"}),
    )
