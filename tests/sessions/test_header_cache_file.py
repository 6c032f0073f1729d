"""The header cache file: a new process's first ``list()`` starts from what the last one learned.

Every test builds real logs and lists them through new ``JsonlPersistence`` objects (as a new
process would) or real subprocesses; the truth each listing must equal is the set of logs on
disk, whatever the cache file holds.
"""

from __future__ import annotations

import json
import logging
import os
import random
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from host.sessions import header_cache_file
from host.sessions.codec import encode_header
from host.sessions.jsonl import JsonlPersistence
from host.sessions.model import SessionHeader
from tests.sessions.header_reads import counted, settle

CACHE = header_cache_file.CACHE_PATH

LISTER = textwrap.dedent(
    """
    import asyncio, json, os, sys
    from host.sessions.jsonl import JsonlPersistence
    if sys.argv[2] == "as-user" and os.geteuid() == 0:
        os.setgid(65534)  # root ignores permissions: list as an ordinary user
        os.setuid(65534)
    headers = asyncio.run(JsonlPersistence(sys.argv[1]).list())
    print(json.dumps([[h.id, h.created_at] for h in headers]))
    """
)


def list_in_subprocess(data_dir: Path, mode: str = "", warning: str = "") -> list[list[object]]:
    """The ``(id, created_at)`` pairs a new process lists; it must succeed and print nothing
    else (but the ``warning`` line, when given)."""
    done = subprocess.run(
        [sys.executable, "-c", LISTER, str(data_dir), mode],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and done.stderr == (warning and warning + "\n"), done.stderr
    result: list[list[object]] = json.loads(done.stdout)
    return result


def store(data_dir: Path, session_id: str, created_at: int) -> SessionHeader:
    header = SessionHeader(id=session_id, created_at=created_at)
    JsonlPersistence(data_dir, fsync="never").open_writer(header, create=True).close()
    return header


async def fresh_list(data_dir: Path) -> tuple[list[tuple[str, int]], list[str]]:
    """What a new persistence lists, and the log files it had to open to answer."""
    persistence = JsonlPersistence(data_dir, fsync="never")
    reads = counted(persistence)
    headers = await persistence.list()
    return [(h.id, h.created_at) for h in headers], sorted(reads)


def cached_three(data_dir: Path) -> list[tuple[str, int]]:
    """Logs a, b, c, settled and listed once (so the cache file holds all three)."""
    for session_id, created_at in (("a", 3), ("b", 1), ("c", 2)):
        store(data_dir, session_id, created_at)
    settle()
    truth = [("b", 1), ("c", 2), ("a", 3)]
    assert [[i, t] for i, t in truth] == list_in_subprocess(data_dir)
    assert (data_dir / CACHE).is_file()
    return truth


async def test_a_new_process_starts_from_the_file_another_wrote(tmp_path: Path) -> None:
    truth = cached_three(tmp_path)
    assert await fresh_list(tmp_path) == (truth, [])  # no log opened
    settle()
    # the file still answers after the directory's timestamps settle (no per-file stat then)
    assert await fresh_list(tmp_path) == (truth, [])


async def test_a_listing_that_learned_nothing_leaves_the_file_alone(tmp_path: Path) -> None:
    truth = cached_three(tmp_path)
    for _ in range(2):  # the directory changed when .index was made: its key is stored anew
        settle()
        await fresh_list(tmp_path)
    before = os.stat(tmp_path / CACHE)
    assert await fresh_list(tmp_path) == (truth, [])
    after = os.stat(tmp_path / CACHE)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


async def test_a_log_too_new_to_cache_does_not_rewrite_the_file(tmp_path: Path) -> None:
    truth = cached_three(tmp_path)
    for _ in range(2):
        settle()
        await fresh_list(tmp_path)
    before = os.stat(tmp_path / CACHE).st_ino
    store(tmp_path, "d", 4)
    assert await fresh_list(tmp_path) == ([*truth, ("d", 4)], ["d.jsonl"])
    assert os.stat(tmp_path / CACHE).st_ino == before  # d is not cached yet: nothing to tell
    settle()
    assert await fresh_list(tmp_path) == ([*truth, ("d", 4)], ["d.jsonl"])
    assert os.stat(tmp_path / CACHE).st_ino != before
    assert await fresh_list(tmp_path) == ([*truth, ("d", 4)], [])


async def test_listing_an_empty_directory_writes_nothing(tmp_path: Path) -> None:
    settle()
    for _ in range(2):
        assert await fresh_list(tmp_path) == ([], [])
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("settled", [False, True], ids=["at-once", "settled"])
async def test_deleted_replaced_and_added_logs_show_in_a_new_process(
    tmp_path: Path, settled: bool
) -> None:
    cached_three(tmp_path)
    settle()
    another_process = textwrap.dedent(
        """
        import os, sys
        from pathlib import Path
        from host.sessions.jsonl import JsonlPersistence
        from host.sessions.model import SessionHeader
        data = Path(sys.argv[1])
        os.unlink(data / "a.jsonl")
        os.unlink(data / "b.jsonl")  # b is created anew with another header
        persistence = JsonlPersistence(data, fsync="never")
        for sid, created in (("b", 20), ("d", 0)):
            persistence.open_writer(SessionHeader(id=sid, created_at=created), create=True).close()
        """
    )
    done = subprocess.run([sys.executable, "-c", another_process, str(tmp_path)], timeout=120)
    assert done.returncode == 0
    if settled:
        settle()
    truth = [("d", 0), ("c", 2), ("b", 20)]
    assert await fresh_list(tmp_path) == (truth, ["b.jsonl", "d.jsonl"])  # c: a stat, no read
    settle()
    assert (await fresh_list(tmp_path))[0] == truth  # rewrites the file if b, d were too new
    assert await fresh_list(tmp_path) == (truth, [])


async def test_a_log_in_the_file_but_no_longer_on_disk_is_not_listed(tmp_path: Path) -> None:
    cached_three(tmp_path)
    (tmp_path / "c.jsonl").unlink()
    assert await fresh_list(tmp_path) == ([("b", 1), ("a", 3)], [])


def _damaged(good: bytes) -> dict[str, bytes]:
    first, _, rest = good.partition(b"\n")
    return {
        "empty": b"",
        "garbage": b"\x00\xff not a cache {]\n" * 20,
        "format-line-only": first + b"\n",
        "other-version": first.replace(b"header-cache 1", b"header-cache 2") + b"\n" + rest,
        "bad-directory-key": b"agent-host/header-cache 1 1 2 x 4\n" + rest,
        "entries-without-format-line": rest,
        "deeply-nested-header": first + b"\na.jsonl 1 2 3 " + b"[" * 100_000 + b"\n",
        "too-large": good + b"#" * (header_cache_file.BYTES_PER_ENTRY * 8),
    }


@pytest.mark.parametrize("damage", list(_damaged(b"x\ny\n")))
async def test_a_damaged_file_is_ignored_and_rebuilt(tmp_path: Path, damage: str) -> None:
    truth = cached_three(tmp_path)
    path = tmp_path / CACHE
    path.write_bytes(_damaged(path.read_bytes())[damage])
    listing, reads = await fresh_list(tmp_path)
    assert listing == truth
    assert reads == ["a.jsonl", "b.jsonl", "c.jsonl"]  # nothing taken from the damaged file
    assert await fresh_list(tmp_path) == (truth, [])  # the file was written anew


async def test_a_file_cut_anywhere_never_changes_the_listing(tmp_path: Path) -> None:
    truth = cached_three(tmp_path)
    path = tmp_path / CACHE
    good = path.read_bytes()
    entries = good.count(b"\n") - 1
    for cut in range(len(good)):
        path.write_bytes(good[:cut])
        listing, reads = await fresh_list(tmp_path)
        assert listing == truth, cut
        whole_lines = good[:cut].count(b"\n") - 1  # entry lines ending before the cut
        assert len(reads) == entries - max(whole_lines, 0), cut


async def test_entries_that_do_not_match_the_directory_are_not_served(tmp_path: Path) -> None:
    cached_three(tmp_path)
    stat = {name: os.stat(tmp_path / f"{name}.jsonl") for name in "abc"}
    directory = os.stat(tmp_path)

    def entry(name: str, inode_shift: int, header: bytes) -> bytes:
        st = stat[name[0]] if name[0] in stat else stat["a"]
        key = b"%d %d %d" % (st.st_ino + inode_shift, st.st_ctime_ns, st.st_size)
        return name.encode() + b" " + key + b" " + header + b"\n"

    forged = SessionHeader(id="b", created_at=99)
    hostile = (
        b"agent-host/header-cache 1 %d %d %d %d\n"
        % (directory.st_dev, directory.st_ino, directory.st_mtime_ns, directory.st_ctime_ns)
        + entry("gone.jsonl", 0, encode_header(SessionHeader(id="gone")).rstrip())
        + entry("a.jsonl", 0, encode_header(forged).rstrip())  # names another session
        + entry("b.jsonl", 10_000_000, encode_header(forged).rstrip())  # another inode
        + entry("c.jsonl", 10_000_000, b"-")  # "no log", for another inode
    )
    (tmp_path / CACHE).write_bytes(hostile)
    truth = [("b", 1), ("c", 2), ("a", 3)]
    assert await fresh_list(tmp_path) == (truth, ["a.jsonl", "b.jsonl", "c.jsonl"])
    assert await fresh_list(tmp_path) == (truth, [])


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    place = tmp_path / "outside"
    place.mkdir()
    return place


@pytest.mark.parametrize("kind", ["directory", "fifo", "device", "symlink", "index-symlink"])
async def test_the_cache_path_taken_by_something_else(
    tmp_path: Path, outside: Path, kind: str
) -> None:
    data_dir = tmp_path / "data"
    truth = cached_three(data_dir)
    path = data_dir / CACHE
    good = path.read_bytes()
    path.unlink()
    refused = f"header cache {path}: is %s, not a regular file; the listing reads the logs' headers"
    warnings = ["", ""]  # the first listing replaces what it refused: the second is silent
    if kind == "directory":
        path.mkdir()
        warnings = [refused % "a directory"] * 2  # a directory is not replaced
    elif kind == "fifo":
        os.mkfifo(path)  # an open without O_NONBLOCK would wait for a writer forever
        warnings[0] = refused % "a FIFO"
    elif kind == "device":
        path.symlink_to("/dev/zero")  # an unbounded read would take all memory
        warnings[0] = refused % "a character device (a link to /dev/zero)"
    elif kind == "symlink":
        (outside / "headers").write_bytes(good)
        path.symlink_to(outside / "headers")
    else:
        shutil.rmtree(path.parent)
        path.parent.symlink_to(outside, target_is_directory=True)
    for warning in warnings:
        assert list_in_subprocess(data_dir, warning=warning) == [[i, t] for i, t in truth]
    assert sorted(p.name for p in outside.iterdir()) == (["headers"] if kind == "symlink" else [])
    if kind == "symlink":
        assert (outside / "headers").read_bytes() == good  # replaced the link, not its target
        assert not path.is_symlink()


async def test_a_fifo_named_like_a_log_is_skipped(tmp_path: Path) -> None:
    truth = cached_three(tmp_path)
    os.mkfifo(tmp_path / "f.jsonl")
    assert list_in_subprocess(tmp_path) == [[i, t] for i, t in truth]


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A data directory every user can read (``tmp_path`` lies under a root-only directory)."""
    place = Path(tempfile.mkdtemp(prefix="header-cache-"))
    place.chmod(0o755)
    data_dir = place / "data"
    data_dir.mkdir()
    try:
        yield data_dir
    finally:
        for path in (data_dir, data_dir / ".index"):
            if path.is_dir():
                path.chmod(0o755)
        shutil.rmtree(place)


@pytest.mark.parametrize("index", ["absent", "damaged-file"])
def test_a_read_only_data_directory_still_lists(shared_dir: Path, index: str) -> None:
    for session_id, created_at in (("a", 3), ("b", 1)):
        store(shared_dir, session_id, created_at)
    damaged = b"agent-host/header-cache 1 -\na.jsonl 1 2 3 {]\n"
    if index == "damaged-file":
        (shared_dir / CACHE.parent).mkdir()
        (shared_dir / CACHE).write_bytes(damaged)
        (shared_dir / CACHE.parent).chmod(0o555)
    shared_dir.chmod(0o555)
    settle()
    for _ in range(2):
        assert list_in_subprocess(shared_dir, "as-user") == [["b", 1], ["a", 3]]
    if index == "absent":
        assert not (shared_dir / CACHE.parent).exists()
    else:
        assert (shared_dir / CACHE).read_bytes() == damaged
        assert os.listdir(shared_dir / CACHE.parent) == ["headers"]  # no temporary file left


async def test_a_failed_write_is_logged_at_debug_only(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    truth = cached_three(tmp_path)
    shutil.rmtree(tmp_path / CACHE.parent)
    (tmp_path / CACHE.parent).write_bytes(b"a file where the directory would be")
    with caplog.at_level(logging.DEBUG, logger="host.sessions.header_cache_file"):
        assert await fresh_list(tmp_path) == (truth, ["a.jsonl", "b.jsonl", "c.jsonl"])
    records = [r for r in caplog.records if r.name == "host.sessions.header_cache_file"]
    assert [r.levelno for r in records] == [logging.DEBUG]
    assert "not written" in records[0].getMessage()


WORKER = textwrap.dedent(
    """
    import asyncio, os, sys
    from pathlib import Path
    from host.sessions.jsonl import JsonlPersistence
    from host.sessions.model import SessionHeader
    data, me, rounds = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    mine = {}
    for i in range(rounds):
        sid = f"{me}-{i}"
        writer = JsonlPersistence(data, fsync="never")
        writer.open_writer(SessionHeader(id=sid, created_at=i), create=True).close()
        mine[sid] = i
        if i >= 2:  # delete one of mine, so the others' cache files hold a stale entry
            os.unlink(data / f"{me}-{i - 2}.jsonl")
            del mine[f"{me}-{i - 2}"]
        listed = asyncio.run(JsonlPersistence(data, fsync="never").list())
        seen = {h.id: h.created_at for h in listed if h.id.startswith(me + "-")}
        assert seen == mine, (i, seen, mine)
    print("ok")
    """
)


async def test_concurrent_processes_list_right_and_leave_a_sound_file(tmp_path: Path) -> None:
    for i in range(50):
        store(tmp_path, f"base-{i}", 1_000 + i)
    settle()
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(tmp_path), f"w{n}", "40"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(3)
    ]
    for worker in workers:
        out, err = worker.communicate(timeout=300)
        assert worker.returncode == 0 and out.split() == ["ok"], err
    on_disk = sorted(p.stem for p in tmp_path.glob("*.jsonl"))
    listing, _ = await fresh_list(tmp_path)
    assert sorted(i for i, _ in listing) == on_disk
    data = (tmp_path / CACHE).read_bytes()
    _, entries = header_cache_file.load(tmp_path / CACHE, len(on_disk))
    assert data.startswith(b"agent-host/header-cache 1 ") and data.endswith(b"\n")
    assert len(entries) == data.count(b"\n") - 1  # every line whole: no torn or mixed write
    assert not [p for p in (tmp_path / CACHE.parent).iterdir() if p.name != "headers"]


def test_loading_never_raises_on_random_bytes(tmp_path: Path) -> None:
    path = tmp_path / "headers"
    good = b"agent-host/header-cache 1 -\n" + b"a.jsonl 1 2 3 " + encode_header(
        SessionHeader(id="a", created_at=5)
    )
    rng = random.Random(5)
    mutate: list[Callable[[bytearray], None]] = [
        lambda b: b.__setitem__(rng.randrange(len(b)), rng.randrange(256)),
        lambda b: b.insert(rng.randrange(len(b)), rng.choice(b" \n-0[{")),
        lambda b: b.__delitem__(rng.randrange(len(b))),
    ]
    for _ in range(2_000):
        data = bytearray(good)
        for _ in range(rng.randrange(1, 4)):
            rng.choice(mutate)(data)
        path.write_bytes(bytes(data))
        _, entries = header_cache_file.load(path, 10)
        for name, (_key, header, _line) in entries.items():
            assert header is None or name == f"{header.id}.jsonl"


async def test_a_new_log_no_durable_point_covered_yet_is_left_out_of_the_file(
    data_dir: Path,
) -> None:
    """With ``turn`` a machine crash may empty a new log until a durable point syncs it, so the
    file a new process trusts leaves it out until then (that process reads it from the log)."""
    persistence = JsonlPersistence(data_dir)
    old = persistence.open_writer(SessionHeader(id="old", created_at=1), create=True)
    old.commit(durable=True)
    old.close()
    child = persistence.open_writer(SessionHeader(id="child", created_at=2), create=True)
    settle()
    assert [h.id for h in await persistence.list()] == ["old", "child"]
    _, saved = header_cache_file.load(data_dir / CACHE, 2)
    assert sorted(saved) == ["old.jsonl"]
    child.close()
    os.truncate(data_dir / "child.jsonl", 0)  # what a machine crash may leave of it
    assert [h.id for h in await JsonlPersistence(data_dir).list()] == ["old"]
