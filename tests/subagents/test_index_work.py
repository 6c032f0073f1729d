"""Work the identity index does per recorded child: one open (its append) and one ``stat`` (is
there anything new?), never a read back of the row it has just written; rows another process
appends meanwhile are still read."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import host.subagents.index as index_module
from host.agents import say
from host.subagents.identity import Identity
from host.subagents.index import IdentityIndex
from host.subagents.types import ChildRequest
from tests.subagents.harness import Env, continuable
from tests.subagents.test_index import header


def count_work(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """From now on: ``os.open`` calls, ``os.stat`` calls and index rows parsed."""
    work: Counter[str] = Counter()
    for name in ("open", "stat"):
        real = getattr(os, name)

        def counting(*args: object, _real: object = real, _name: str = name, **kw: object) -> object:
            work[_name] += 1
            return _real(*args, **kw)  # type: ignore[operator]

        monkeypatch.setattr(os, name, counting)
    parse = index_module._parse_row

    def parsing(line: bytes) -> object:
        work["parsed"] += 1
        return parse(line)

    monkeypatch.setattr(index_module, "_parse_row", parsing)
    return work


def test_recording_a_child_opens_once_and_reads_nothing_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = IdentityIndex(tmp_path / "data" / ".index" / "identity.jsonl")
    index.record(header("c0"), continuable("first"), 0)  # creates the file
    index.refresh()  # and reads it once
    work = count_work(monkeypatch)
    for number in range(1, 21):
        index.record(header(f"c{number}"), continuable(f"task {number}"), 0)
    assert work == Counter({"open": 20, "stat": 20})
    assert index.lookup(header("c20")) == Identity("continuable", "task 20", "spawn", 0)
    assert len(index) == 21


def test_rows_of_another_process_are_still_read(tmp_path: Path) -> None:
    path = tmp_path / "identity.jsonl"
    ours, theirs = IdentityIndex(path), IdentityIndex(path)
    ours.record(header("c1"), continuable("ours"), 0)
    ours.refresh()
    theirs.record(header("c2"), continuable("theirs"), 0)  # appended behind our back
    ours.record(header("c3"), continuable("ours again"), 0)
    assert ours.lookup(header("c2")) == Identity("continuable", "theirs", "spawn", 0)
    assert ours.lookup(header("c3")) == Identity("continuable", "ours again", "spawn", 0)
    theirs.record(header("c4"), continuable("theirs again"), 0)
    assert ours.lookup(header("c4")) == Identity("continuable", "theirs again", "spawn", 0)
    assert len(ours) == len(theirs) == 4


def test_recording_a_new_child_checks_the_file_for_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A child just created has a fresh id: no row of it can be there to find, so its row is
    appended without a ``stat`` of the file first."""
    path = tmp_path / "data" / ".index" / "identity.jsonl"
    index = IdentityIndex(path)
    index.record(header("c0"), continuable("first"), 0)
    index.refresh()
    IdentityIndex(path).record(header("c1"), continuable("theirs"), 0)  # another process's
    work = count_work(monkeypatch)
    for number in range(2, 22):
        index.record(header(f"c{number}"), continuable(f"task {number}"), 0, new=True)
    assert work == Counter({"open": 20})
    monkeypatch.undo()
    assert index.lookup(header("c1")) == Identity("continuable", "theirs", "spawn", 0)
    assert index.lookup(header("c21")) == Identity("continuable", "task 21", "spawn", 0)
    assert len(index) == 22


async def test_starting_a_continuable_child_opens_the_index_once_to_append(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = await env.root()
    env.model.script("first", say("done"))
    first = await env.subagents.start_continuable(
        "spawn", ChildRequest("task"), parent=root, label="first"
    )  # the index file exists from now on
    await env.settled(first.child_id, root)
    index = env.subagents.index()
    assert index is not None
    touched: Counter[tuple[str, str]] = Counter()
    for name in ("open", "stat"):
        real = getattr(os, name)

        def counting(path: Any, *args: Any, _real: Any = real, _name: str = name, **kw: Any) -> Any:
            touched[_name, os.fspath(path) if not isinstance(path, int) else ""] += 1
            return _real(path, *args, **kw)

        monkeypatch.setattr(os, name, counting)
    env.model.script("second", say("done"))
    second = await env.subagents.start_continuable(
        "spawn", ChildRequest("task"), parent=root, label="second"
    )
    monkeypatch.undo()
    on_index = Counter({key: n for key, n in touched.items() if key[1] == os.fspath(index.path)})
    assert on_index == Counter({("open", os.fspath(index.path)): 1})
    child = env.agents.get(second.child_id)
    assert child is not None
    assert index.lookup(child.session.header) == Identity("continuable", "second", "spawn", 0)
    await env.settled(second.child_id, root)
