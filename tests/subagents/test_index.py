"""The identity index on its own: trust gates, record/merge, damage tolerance, compaction."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from host.sessions.model import SessionHeader
from host.subagents.identity import Identity, IdentityProblem
from host.subagents.index import INDEX_BYTES, IdentityIndex, fingerprint
from tests.subagents.harness import continuable, one_shot


def header(sid: str = "c1", **kw) -> SessionHeader:
    base: dict[str, Any] = {
        "id": sid,
        "parent_session": "p",
        "created_at": 10,
        "origin": "subagent",
    }
    base.update(kw)
    return SessionHeader(**base)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "data" / ".index" / "identity.jsonl"


def test_fingerprint_is_stable_and_covers_every_field() -> None:
    h = header()
    assert fingerprint(h) == fingerprint(header())
    for change in (
        {"id": "c2"},
        {"parent_session": "q"},
        {"created_at": 11},
        {"origin": None},
        {"delegation_depth": 1},
        {"seed_length": 1},
    ):
        assert fingerprint(header(**change)) != fingerprint(h), change


def test_record_then_lookup_across_instances(path: Path) -> None:
    index = IdentityIndex(path)
    index.record(header(), continuable("w"), 0)
    assert index.lookup(header()) == Identity("continuable", "w", "spawn", 0)
    assert IdentityIndex(path).lookup(header()) == Identity("continuable", "w", "spawn", 0)
    assert IdentityIndex(path).lookup(header(created_at=99)) is None  # stale fingerprint
    assert IdentityIndex(path).lookup(header("other")) is None


def test_seed_descriptor_is_never_recorded(path: Path) -> None:
    index = IdentityIndex(path)
    index.record(header(seed_length=3), continuable("ancestor"), 2)
    assert index.lookup(header(seed_length=3)) is None
    assert not path.exists()


def test_second_own_descriptor_makes_the_row_corrupt(path: Path) -> None:
    index = IdentityIndex(path)
    index.record(header(), one_shot(), 0)
    index.record(header(), one_shot(), 0)  # idempotent
    assert index.lookup(header()) == Identity("one-shot", None, "spawn", 0)
    index.record(header(), one_shot(), 5)
    verdict = IdentityIndex(path).lookup(header())
    assert isinstance(verdict, IdentityProblem) and verdict.reason == "corrupt" and verdict.seq == 5


def test_unversioned_rows_are_not_trusted(path: Path) -> None:
    IdentityIndex(path).record(header(), continuable(), 0)
    assert IdentityIndex(path, unit_version=2).lookup(header()) is None


def test_invalidate_drops_the_row(path: Path) -> None:
    index = IdentityIndex(path)
    index.record(header(), continuable(), 0)
    index.invalidate("c1")
    assert index.lookup(header()) is None
    assert IdentityIndex(path).lookup(header()) is None


def test_store_skips_verdicts_without_a_seq(path: Path) -> None:
    index = IdentityIndex(path)
    index.store(header(), IdentityProblem("corrupt", None))
    assert index.lookup(header()) is None


def test_garbage_lines_and_torn_tail_are_skipped(path: Path) -> None:
    index = IdentityIndex(path)
    index.record(header("a"), continuable("a"), 0)
    with path.open("ab") as file:
        file.write(b'not json\n[1,2]\n{"id":"b","fp":1}\n\xff\xfe\n')
    index.record(header("b"), continuable("b"), 0)
    with path.open("ab") as file:
        file.write(b'{"id":"c","fp"')
    fresh = IdentityIndex(path)
    assert fresh.lookup(header("a")) is not None and fresh.lookup(header("b")) is not None
    assert len(fresh) == 2


def test_incremental_read_sees_other_writers(path: Path) -> None:
    mine, theirs = IdentityIndex(path), IdentityIndex(path)
    mine.record(header("a"), continuable(), 0)
    assert theirs.lookup(header("a")) is not None
    mine.record(header("b"), continuable(), 0)
    assert theirs.lookup(header("b")) is not None
    path.unlink()
    assert theirs.lookup(header("a")) is None


def test_unreadable_and_unwritable_index_never_raises(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    index = IdentityIndex(blocker / "sub" / "identity.jsonl")  # parent is a file
    index.record(header(), continuable(), 0)
    assert index.lookup(header()) is None  # a file it cannot read trusts nothing, not even its own
    assert IdentityIndex(blocker / "sub" / "identity.jsonl").lookup(header()) is None
    directory = tmp_path / "dir.jsonl"
    directory.mkdir()
    assert IdentityIndex(directory).lookup(header()) is None


def test_superseded_rows_are_compacted(path: Path) -> None:
    index = IdentityIndex(path)
    for _ in range(300):
        index.record(header(), continuable(), 0)
    index.record(header("b"), one_shot(), 1)
    size = os.path.getsize(path)
    fresh = IdentityIndex(path)
    assert fresh.lookup(header()) == Identity("continuable", "worker", "spawn", 0)
    assert os.path.getsize(path) < size / 10
    assert len(path.read_text().splitlines()) == 2
    assert IdentityIndex(path).lookup(header("b")) == Identity("one-shot", None, "spawn", 1)


LOOKUPS = """
import logging, sys
from pathlib import Path
from host.sessions.model import SessionHeader
from host.subagents.index import IdentityIndex
from tests.subagents.harness import continuable
logging.basicConfig(format="%(message)s")
index = IdentityIndex(Path(sys.argv[1]))
child = SessionHeader(id="c1", parent_session="p", created_at=10, origin="subagent")
assert [index.lookup(child) for _ in range(3)] == [None] * 3
index.record(child, continuable(), 0)
"""


def lookups_in_subprocess(path: Path) -> list[str]:
    """What three lookups and a record on ``path`` log, in a process with 1 GiB of address
    space and a minute: an endless read or a blocked open would fail it."""
    done = subprocess.run(
        [sys.executable, "-c", LOOKUPS, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).parents[2],
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)),
    )
    assert done.returncode == 0, done.stderr
    return done.stderr.splitlines()


def test_an_index_that_is_a_device_or_a_fifo_is_one_warning(path: Path) -> None:
    path.parent.mkdir(parents=True)
    path.symlink_to("/dev/zero")
    assert lookups_in_subprocess(path) == [
        f"identity index {path}: is a character device (a link to /dev/zero), not a regular file",
        f"cannot write identity index {path}: it is a link",
    ]
    path.unlink()
    os.mkfifo(path)  # nobody reads or writes it: a blocking open waits forever
    [refused, unwritten] = lookups_in_subprocess(path)
    assert refused == f"identity index {path}: is a FIFO, not a regular file"
    assert unwritten.startswith(f"cannot write identity index {path}: ")


def test_an_oversized_index_is_one_warning_and_never_read(path: Path) -> None:
    IdentityIndex(path).record(header(), continuable(), 0)  # the row the lookups look for
    with path.open("r+b") as file:
        file.truncate(4 << 30)  # sparse: a repository can commit it; read whole, 4 GiB
    assert lookups_in_subprocess(path) == [
        f"identity index {path}: larger than {INDEX_BYTES} bytes"
    ]


def test_an_index_at_its_limit_is_read(path: Path) -> None:
    IdentityIndex(path).record(header(), continuable(), 0)
    os.truncate(path, INDEX_BYTES)  # sparse: NULs after the row, a torn last line
    assert IdentityIndex(path).lookup(header()) == Identity("continuable", "worker", "spawn", 0)
    os.truncate(path, INDEX_BYTES + 1)
    assert IdentityIndex(path).lookup(header()) is None  # a miss: the child's log is read


def test_an_index_that_is_a_link_is_never_written_through(path: Path, tmp_path: Path) -> None:
    """A repository may commit the data directory: an index linked to one of the user's files
    must not get rows appended to that file."""
    victim = tmp_path / "bashrc"
    victim.write_text("export PATH\n")
    path.parent.mkdir(parents=True)
    path.symlink_to(victim)
    index = IdentityIndex(path)
    index.record(header(), continuable(), 0)
    index.invalidate("c1")
    assert victim.read_text() == "export PATH\n"
    assert IdentityIndex(path).lookup(header()) is None  # nothing was recorded through it
