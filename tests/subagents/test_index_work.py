"""Work the identity index does per recorded child: one open (its append) and one ``stat`` (is
there anything new?), never a read back of the row it has just written; rows another process
appends meanwhile are still read."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

import host.subagents.index as index_module
from host.subagents.identity import Identity
from host.subagents.index import IdentityIndex
from tests.subagents.harness import continuable
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
