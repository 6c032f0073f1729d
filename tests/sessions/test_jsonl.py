"""JSONL persistence: what only files show — damaged logs, bytes on disk, the header cache.

What every backend promises (round trips, missing sessions, locks, repairs of an open turn)
is in ``tests/persistence_contract``, which runs against JSONL too.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from host.cancel import CancelSignal
from host.sessions import new_logs
from host.sessions.codec import encode_event, encode_header
from host.sessions.jsonl import JsonlPersistence
from host.sessions.loading import load
from host.sessions.model import (
    Event,
    MessageEvent,
    PluginEvent,
    SessionHeader,
    SessionIdError,
)
from host.sessions.persistence import PersistenceError
from tests.session_logs import as_events, turn_bodies, write_session
from tests.sessions.header_reads import counted, listed, settle

HOSTILE_IDS = ["../x", "a/b", "a\x00b", "a" * 4096, "", "-x", ".", "..", "x.jsonl", "/etc/passwd"]


def tree(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


async def test_round_trip_and_format(persistence: JsonlPersistence) -> None:
    bodies = turn_bodies()
    header = write_session(persistence, "s1", bodies)
    stored = await persistence.inspect("s1")
    assert stored.header == header
    assert list(stored.events) == as_events(bodies)
    assert stored.ignored_bytes == 0 and not stored.damaged_middle
    lines = persistence.path_for("s1").read_bytes().splitlines()
    assert lines[0].startswith(b'{"format":"agent-host/session","version":1,"id":"s1"')
    assert lines[1].startswith(b'{"seq":0,"kind":"turn/start"')


async def test_torn_tail_inspect_ignores_load_repairs(persistence: JsonlPersistence) -> None:
    write_session(persistence, "s1", turn_bodies())
    path = persistence.path_for("s1")
    partial = encode_event(Event(4, MessageEvent(role="user", content="torn")))[:25]
    with path.open("ab") as f:
        f.write(partial)
    before = path.read_bytes()
    stored = await persistence.inspect("s1")
    assert len(stored.events) == 4
    assert stored.ignored_bytes == len(partial) and not stored.damaged_middle
    assert path.read_bytes() == before  # inspect never repairs
    loaded = await load(persistence, "s1")
    assert loaded.repaired_bytes == len(partial) and loaded.closed_turn is None
    assert path.read_bytes() == before[: -len(partial)]
    assert (await persistence.inspect("s1")).ignored_bytes == 0


async def test_garbage_last_line(persistence: JsonlPersistence) -> None:
    write_session(persistence, "s1", turn_bodies())
    path = persistence.path_for("s1")
    with path.open("ab") as f:
        f.write(b"garbage\n")
    stored = await persistence.inspect("s1")
    assert (len(stored.events), stored.ignored_bytes, stored.damaged_middle) == (4, 8, False)
    loaded = await load(persistence, "s1")
    assert loaded.repaired_bytes == 8 and len(loaded.events) == 4


async def test_nul_filled_tail_is_a_torn_tail(persistence: JsonlPersistence) -> None:
    write_session(persistence, "s1", turn_bodies())
    with persistence.path_for("s1").open("ab") as f:
        f.write(b"\x00" * 300 + b"\n" + b"\x00" * 100)
    stored = await persistence.inspect("s1")
    assert (len(stored.events), stored.ignored_bytes, stored.damaged_middle) == (4, 401, False)
    assert (await load(persistence, "s1")).repaired_bytes == 401


async def test_garbage_middle_line_ends_prefix_and_load_refuses(
    persistence: JsonlPersistence,
) -> None:
    write_session(persistence, "s1", turn_bodies())
    path = persistence.path_for("s1")
    lines = path.read_bytes().splitlines(keepends=True)
    damaged = b"".join([*lines[:3], b"{not json\n", *lines[3:]])
    path.write_bytes(damaged)
    stored = await persistence.inspect("s1")
    assert [e.seq for e in stored.events] == [0, 1]
    assert stored.damaged_middle
    assert stored.valid_bytes == sum(len(x) for x in lines[:3])
    with pytest.raises(PersistenceError) as err:
        await load(persistence, "s1")
    assert err.value.code == "CORRUPT"
    assert path.read_bytes() == damaged  # nothing changed


async def test_wrong_seq_ends_prefix(persistence: JsonlPersistence) -> None:
    write_session(persistence, "s1", turn_bodies())
    with persistence.path_for("s1").open("ab") as f:
        f.write(encode_event(Event(9, MessageEvent(role="user", content="gap"))))
    stored = await persistence.inspect("s1")
    assert len(stored.events) == 4 and stored.ignored_bytes > 0 and stored.damaged_middle


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"garbage\n",
        b'{"seq":0,"kind":"turn/start","turn_id":"t"}\n',
        b'{"format":"agent-host/session","version":1,"id":"other"}\n',
        b'{"format":"agent-host/session","version":99,"id":"s1"}\n',
        encode_header(SessionHeader(id="s1")).rstrip(b"\n"),  # header without its newline
    ],
    ids=["empty", "garbage", "event-first", "other-id", "future-version", "torn-header"],
)
async def test_missing_or_wrong_header_is_corrupt(
    persistence: JsonlPersistence, data_dir: Path, content: bytes
) -> None:
    data_dir.mkdir()
    path = data_dir / "s1.jsonl"
    path.write_bytes(content)
    for call in (persistence.inspect, partial(load, persistence)):
        with pytest.raises(PersistenceError) as err:
            await call("s1")
        assert err.value.code == "CORRUPT"
    assert path.read_bytes() == content
    assert await persistence.list() == []


@pytest.mark.parametrize("bad", HOSTILE_IDS, ids=range(len(HOSTILE_IDS)))
async def test_hostile_ids_write_nothing(
    persistence: JsonlPersistence, sandbox: Path, bad: str
) -> None:
    before = (tree(sandbox), tree(sandbox.parent))
    with pytest.raises(SessionIdError):
        await persistence.inspect(bad)
    with pytest.raises(SessionIdError):
        await load(persistence, bad)
    with pytest.raises(SessionIdError):
        persistence.path_for(bad)
    with pytest.raises(SessionIdError):
        SessionHeader(id=bad)
    assert (tree(sandbox), tree(sandbox.parent)) == before
    assert not (sandbox / "data").exists()


async def test_create_twice(persistence: JsonlPersistence) -> None:
    header = write_session(persistence, "s1", [])
    with pytest.raises(PersistenceError) as err:
        persistence.open_writer(header, create=True)
    assert err.value.code == "ALREADY_EXISTS"
    assert [p.name for p in persistence.data_dir.iterdir()] == ["s1.jsonl"]


async def test_append_rules(persistence: JsonlPersistence) -> None:
    header = SessionHeader(id="s1")
    writer = persistence.open_writer(header, create=True)
    path = persistence.path_for("s1")
    size = path.stat().st_size
    bad_batch = [
        Event(0, MessageEvent(role="user", content="ok")),
        Event(1, PluginEvent(plugin="p", type="p/x", data=object())),
    ]
    with pytest.raises(PersistenceError) as err:
        writer.append(bad_batch)
    assert err.value.code == "PERSISTENCE_FAILED"
    with pytest.raises(PersistenceError):
        writer.append([Event(5, MessageEvent(role="user", content="gap"))])
    assert path.stat().st_size == size  # nothing written, not even half a batch
    writer.append(bad_batch[:1])
    writer.commit(durable=True)
    writer.close()
    with pytest.raises(PersistenceError) as err:
        writer.append([Event(1, MessageEvent(role="user", content="late"))])
    assert err.value.code == "PERSISTENCE_FAILED"
    assert len((await persistence.inspect("s1")).events) == 1


async def test_reopen_refuses_torn_tail_and_other_header(persistence: JsonlPersistence) -> None:
    header = write_session(persistence, "s1", turn_bodies())
    with persistence.path_for("s1").open("ab") as f:
        f.write(b'{"seq":4')
    with pytest.raises(PersistenceError) as err:
        persistence.open_writer(header, create=False)
    assert err.value.code == "CORRUPT"
    await load(persistence, "s1")
    with pytest.raises(PersistenceError) as err:
        persistence.open_writer(SessionHeader(id="s1", created_at=1), create=False)
    assert err.value.code == "CORRUPT"
    writer = persistence.open_writer(header, create=False)
    assert writer.next_seq == 4
    writer.close()


@pytest.mark.parametrize("policy", ["never", "turn", "always"])
async def test_policies_write_the_same(data_dir: Path, policy: str) -> None:
    persistence = JsonlPersistence(data_dir, fsync=policy)  # type: ignore[arg-type]
    writer = persistence.open_writer(SessionHeader(id="s1"), create=True)
    writer.append(as_events(turn_bodies()))
    writer.commit(durable=True)
    writer.close()
    assert len((await persistence.inspect("s1")).events) == 4


async def test_list_headers_sorted_and_skips_non_sessions(
    persistence: JsonlPersistence, data_dir: Path
) -> None:
    write_session(persistence, "b", [], created_at=5)
    write_session(persistence, "a", [], created_at=5)
    write_session(persistence, "c", [], created_at=1)
    (data_dir / "notes.txt").write_text("x")
    (data_dir / ".tmp.jsonl").write_text("x")
    (data_dir / "empty.jsonl").write_bytes(b"")
    (data_dir / "junk.jsonl").write_bytes(b"junk\n")
    os.mkdir(data_dir / "dir.jsonl")
    assert [h.id for h in await persistence.list()] == ["c", "a", "b"]


def opens_recorded(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Every ``os.open`` from now on: (the file's name, flags)."""
    opened: list[tuple[str, int]] = []
    real_open = os.open

    def recording(path: str, flags: int, *args: Any, **kwargs: Any) -> int:
        opened.append((os.path.basename(path), flags))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", recording)
    return opened


async def test_list_never_opens_a_device_or_fifo_named_like_a_log(
    persistence: JsonlPersistence, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_session(persistence, "real", [], created_at=1)
    write_session(JsonlPersistence(tmp_path / "elsewhere"), "linked", [], created_at=2)
    (data_dir / "linked.jsonl").symlink_to(tmp_path / "elsewhere" / "linked.jsonl")
    (data_dir / "abc.jsonl").symlink_to("/dev/zero")  # opening a device can do anything
    (data_dir / "rnd.jsonl").symlink_to("/dev/urandom")
    os.mkfifo(data_dir / "fifo.jsonl")
    os.mkdir(data_dir / "dir.jsonl")
    opened = opens_recorded(monkeypatch)
    for _ in range(2):  # the second from the header cache
        assert [h.id for h in await persistence.list()] == ["real", "linked"]
    names = {name for name, _ in opened}
    assert {"abc.jsonl", "rnd.jsonl", "fifo.jsonl", "dir.jsonl"}.isdisjoint(names), opened
    assert {"real.jsonl", "linked.jsonl"} <= names  # what was recorded is what it opens
    # a link swapped in after the listing's stat: unreadable (skipped), its device not opened
    opened.clear()
    with pytest.raises(OSError):
        persistence._read_header("abc.jsonl")
    tried = [flags & (os.O_NOFOLLOW | os.O_PATH) for _, flags in opened]
    assert tried == [os.O_NOFOLLOW, os.O_PATH], opened  # a link is no log; then a handle only


async def test_list_of_missing_dir_is_empty(tmp_path: Path) -> None:
    assert await JsonlPersistence(tmp_path / "none").list() == []
    assert not (tmp_path / "none").exists()


async def test_cancelled(persistence: JsonlPersistence) -> None:
    write_session(persistence, "s1", turn_bodies(close=False))
    before = persistence.path_for("s1").read_bytes()
    signal = CancelSignal()
    signal.set("stop")
    for call in (
        persistence.list(signal=signal),
        persistence.inspect("s1", signal=signal),
        load(persistence, "s1", signal=signal),
    ):
        with pytest.raises(PersistenceError) as err:
            await call
        assert err.value.code == "CANCELLED"
    assert persistence.path_for("s1").read_bytes() == before


# -- list(): the header cache ------------------------------------------------------------------


async def test_list_cache_serves_the_same_headers(tmp_path: Path) -> None:
    persistence = JsonlPersistence(tmp_path, fsync="never")
    reads = counted(persistence)
    made = [SessionHeader(id=f"c{i}", created_at=1000 - i) for i in range(5)]
    for header in made:
        persistence.open_writer(header, create=True).close()
    settle()
    first = await persistence.list()
    assert first == sorted(made, key=SessionHeader.sort_key)
    assert sorted(reads) == [f"c{i}.jsonl" for i in range(5)]  # every file a miss
    reads.clear()
    second = await persistence.list()  # served from the cache (every entry a hit)
    assert second == first and second is not first
    assert reads == []
    second.clear()
    assert await persistence.list() == first  # the caller's list is its own
    assert reads == []
    fresh = JsonlPersistence(tmp_path)
    fresh_reads = counted(fresh)
    assert await fresh.list() == first
    assert fresh_reads == []  # a new instance (process) starts from the cache file


async def test_list_cache_sees_recreated_added_and_removed_files(tmp_path: Path) -> None:
    persistence = JsonlPersistence(tmp_path, fsync="never")
    reads = counted(persistence)
    persistence.open_writer(SessionHeader(id="a", created_at=1), create=True).close()
    persistence.open_writer(SessionHeader(id="b", created_at=2), create=True).close()
    settle()
    assert await listed(persistence, reads) == (["a", "b"], ["a.jsonl", "b.jsonl"])
    assert await listed(persistence, reads) == (["a", "b"], [])  # both hits
    # delete and recreate "a" with another header: the file system may reuse the inode
    (tmp_path / "a.jsonl").unlink()
    persistence.open_writer(SessionHeader(id="a", created_at=3), create=True).close()
    assert [(h.id, h.created_at) for h in await persistence.list()] == [("b", 2), ("a", 3)]
    assert reads == ["a.jsonl"]  # "b" is unchanged: checked by stat, not read
    reads.clear()
    settle()
    (tmp_path / "b.jsonl").unlink()
    persistence.open_writer(SessionHeader(id="b", created_at=4), create=True).close()
    persistence.open_writer(SessionHeader(id="c", created_at=0), create=True).close()
    listing = await persistence.list()
    assert [(h.id, h.created_at) for h in listing] == [("c", 0), ("a", 3), ("b", 4)]
    assert {"b.jsonl", "c.jsonl"} <= set(reads)  # "a" too if it was too fresh to be cached
    reads.clear()
    settle()
    await persistence.list()  # now every file is settled and cached
    reads.clear()
    assert await listed(persistence, reads) == (["c", "a", "b"], [])
    (tmp_path / "a.jsonl").unlink()
    assert await listed(persistence, reads) == (["c", "b"], [])


async def test_list_cache_rereads_a_file_that_becomes_readable(tmp_path: Path) -> None:
    persistence = JsonlPersistence(tmp_path, fsync="never")
    reads = counted(persistence)
    junk = tmp_path / "j.jsonl"
    junk.write_bytes(b"not a header\n")
    settle()
    assert await listed(persistence, reads) == ([], ["j.jsonl"])
    assert await listed(persistence, reads) == ([], [])  # unchanged: not read again
    junk.write_bytes(encode_header(SessionHeader(id="j", created_at=5)))  # same inode
    assert await listed(persistence, reads) == (["j"], ["j.jsonl"])


def test_construction_prepares_reads_off_the_request_path(tmp_path: Path) -> None:
    """A fresh process: building the persistence (plugin activation) starts a worker thread
    and generates the event decoders on it, so the first resume pays neither."""
    code = textwrap.dedent(
        f"""
        import threading, time
        from host.sessions import event_hooks
        from host.sessions.jsonl import JsonlPersistence
        assert not event_hooks._configured
        JsonlPersistence({str(tmp_path)!r})
        names = [t.name for t in threading.enumerate()]
        assert any(n.startswith("agent-host-persistence") for n in names), names
        deadline = time.monotonic() + 30
        while not event_hooks._configured:
            assert time.monotonic() < deadline, "decoders never prepared"
            time.sleep(0.01)
        print("prepared")
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["prepared"]


async def test_a_writer_whose_fsync_failed_still_speaks_for_its_session(
    persistence: JsonlPersistence, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer made unusable by a failed fsync held the lock until its close, so nobody took
    the session from it: its voice (a settled child's notice) holds, open and closed."""
    header = write_session(persistence, "s1", turn_bodies())
    writer = persistence.open_writer(header, create=False)
    voice = writer.voice()

    def failing(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(new_logs, "sync_fd", failing)
    with pytest.raises(PersistenceError):
        writer.commit(durable=True)
    with pytest.raises(PersistenceError, match="unusable"):
        writer.append([])
    assert await voice.holds()
    writer.close()
    assert await voice.holds()
