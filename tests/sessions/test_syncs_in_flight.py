"""Syncs off the event loop (fsync policy ``turn``): a durable commit runs its sync on the sync
thread, awaited, while the event loop goes on; the syncs asked for meanwhile run after it as one
batch; and a new log waits for no sync: its data and name are made durable by the first durable
commit after its link (one directory sync for every link before it), before anything durable
can name the log. With ``always`` a new log's data sync runs on the sync thread before its
link. Observed by counting and gating the sync calls, never by time.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from host.sessions import new_logs
from host.sessions.jsonl import JsonlPersistence, JsonlWriter
from host.sessions.model import Event, SessionHeader
from host.sessions.persistence import PersistenceError
from host.sessions.session import SessionError
from host.sessions.store import SessionStore
from tests.session_logs import as_events, turn_bodies

WAIT = 30.0  # a generous timeout for a thread to arrive, never a threshold


class Syncs:
    """``sync_fd`` replaced: each call recorded (its inode, the thread), optionally held at a
    gate until ``release``; ``in_flight``/``most`` count calls inside it at once."""

    def __init__(self, real: Callable[[int], None]) -> None:
        self.real = real
        self.inodes: list[int] = []
        self.threads: set[int] = set()
        self.in_flight = self.most = 0
        self.gate: threading.Event | None = None
        self.entered = threading.Semaphore(0)
        self.meet: threading.Barrier | None = None
        self.fail: OSError | None = None
        self.fail_once = False  # the next sync fails, then they succeed again
        self.gate_inode: int | None = None  # only this file's sync is held, and signalled
        self.fail_inode: int | None = None  # this file's syncs fail
        self.errors: list[OSError] = []
        self._lock = threading.Lock()

    def __call__(self, fd: int) -> None:
        ino = os.fstat(fd).st_ino
        chosen = self.gate_inode is None or ino == self.gate_inode
        with self._lock:
            self.inodes.append(ino)
            self.threads.add(threading.get_ident())
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
        try:
            if chosen:
                self.entered.release()
            if self.meet is not None:
                self.meet.wait(WAIT)  # broken (an error) unless the others arrive meanwhile
            if chosen and self.gate is not None and not self.gate.wait(WAIT):
                raise AssertionError("the gate was never opened")
            if ino == self.fail_inode:
                raise OSError(5, "Input/output error")
            if self.fail is not None:
                error = self.fail
                if self.fail_once:
                    self.fail = None
                raise error
            try:
                os.fstat(fd)  # still open: nobody closed it under the sync
            except OSError as error:
                self.errors.append(error)
                raise
            self.real(fd)
        finally:
            with self._lock:
                self.in_flight -= 1

    def forget(self) -> None:
        """Forget the calls so far (a test's set-up)."""
        self.inodes.clear()
        self.threads.clear()
        self.most = 0
        self.entered = threading.Semaphore(0)

    def hold(self) -> threading.Event:
        self.gate = threading.Event()
        return self.gate

    def hold_at(self, inode: int) -> threading.Event:
        """Hold the sync of the file ``inode`` (only) at the returned gate."""
        self.gate_inode = inode
        return self.hold()

    def fail_at(self, inode: int) -> None:
        """Fail every sync of the file ``inode`` (only) from now on."""
        self.fail_inode = inode

    async def entered_once(self) -> None:
        """Wait (off the loop) until a sync call has begun."""
        assert await asyncio.to_thread(self.entered.acquire, True, WAIT)


@pytest.fixture
def syncs(monkeypatch: pytest.MonkeyPatch) -> Iterator[Syncs]:
    recorder = Syncs(new_logs.sync_fd)
    monkeypatch.setattr(new_logs, "sync_fd", recorder)
    yield recorder
    if recorder.gate is not None:
        recorder.gate.set()


@pytest.fixture
def dir_syncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The inode of every ``os.fsync`` (the directory's) from now on."""
    synced: list[int] = []
    real = os.fsync

    def recording(fd: int) -> None:
        synced.append(os.fstat(fd).st_ino)
        real(fd)

    monkeypatch.setattr(os, "fsync", recording)
    return synced


def created(persistence: JsonlPersistence, *session_ids: str) -> list[JsonlWriter]:
    """New logs, nothing synced yet (with ``turn``)."""
    return [persistence.open_writer(SessionHeader(id=i), create=True) for i in session_ids]


def written(persistence: JsonlPersistence, session_id: str, syncs: Syncs) -> JsonlWriter:
    """A new log made durable, then a turn appended (the syncs so far forgotten)."""
    writer = persistence.open_writer(SessionHeader(id=session_id, created_at=1), create=True)
    writer.commit(durable=True)
    writer.append(as_events(turn_bodies()))
    syncs.forget()
    return writer


async def held_commit(
    writer: JsonlWriter, syncs: Syncs
) -> tuple[asyncio.Future[None], threading.Event]:
    """The writer's durable commit, its sync begun and held at the gate (returned)."""
    gate = syncs.hold()
    commit = asyncio.ensure_future(writer.commit_async(durable=True))
    await syncs.entered_once()
    return commit, gate


def inode(path: Path) -> int:
    return os.stat(path).st_ino


async def test_syncs_asked_for_during_a_sync_run_after_it_as_one_batch(
    persistence: JsonlPersistence, syncs: Syncs, data_dir: Path
) -> None:
    writers = [written(persistence, name, syncs) for name in "abc"]
    first, gate = await held_commit(writers[0], syncs)
    rest = [asyncio.ensure_future(w.commit_async(durable=True)) for w in writers[1:]]
    for _ in range(5):
        await asyncio.sleep(0)  # both are queued behind the sync in flight
    assert syncs.inodes == [inode(data_dir / "a.jsonl")]
    gate.set()
    await first
    # the queued syncs ran as the next batch, and the loop was told of it at once
    await asyncio.wait_for(asyncio.gather(*rest), WAIT)
    assert syncs.inodes == [inode(data_dir / f"{name}.jsonl") for name in "abc"]
    assert syncs.most == 1  # one after another: the first commits the journal for the rest
    assert len(syncs.threads) == 1  # the sync thread
    assert threading.get_ident() not in syncs.threads  # not the event loop's
    for writer in writers:
        writer.close()


async def test_a_failing_sync_in_a_batch_fails_only_its_own_commit(
    persistence: JsonlPersistence, syncs: Syncs, data_dir: Path
) -> None:
    writers = [written(persistence, name, syncs) for name in "ab"]
    first, gate = await held_commit(writers[0], syncs)
    second = asyncio.ensure_future(writers[1].commit_async(durable=True))
    syncs.fail, syncs.fail_once = OSError(5, "Input/output error"), True
    gate.set()
    with pytest.raises(PersistenceError, match="cannot sync session 'a'"):
        await first
    await second  # the next sync of the same batch still ran, and succeeded
    assert syncs.inodes == [inode(data_dir / f"{name}.jsonl") for name in "ab"]
    with pytest.raises(PersistenceError, match="unusable: fsync failed"):
        writers[0].append([])
    writers[1].append([Event(4, turn_bodies()[0])])  # unharmed
    for writer in writers:
        writer.close()


async def test_an_append_during_a_sync_is_synced_by_the_next_durable_commit(
    persistence: JsonlPersistence, syncs: Syncs, data_dir: Path
) -> None:
    writer = written(persistence, "s1", syncs)
    commit, gate = await held_commit(writer, syncs)
    writer.append([Event(4, turn_bodies()[0])])  # while the sync runs: not recorded as synced
    gate.set()
    await commit
    writer.commit(durable=True)
    writer.commit(durable=True)  # nothing new since: no sync
    assert syncs.inodes == [inode(data_dir / "s1.jsonl")] * 2
    writer.close()


async def test_a_failing_sync_on_a_worker_thread_breaks_the_writer(
    persistence: JsonlPersistence, syncs: Syncs
) -> None:
    writer = written(persistence, "s1", syncs)
    syncs.fail = OSError(5, "Input/output error")
    with pytest.raises(PersistenceError) as failed:
        await writer.commit_async(durable=True)
    assert failed.value.code == PersistenceError.PERSISTENCE_FAILED
    assert failed.value.message == "cannot sync session 's1': [Errno 5] Input/output error"
    assert threading.get_ident() not in syncs.threads
    with pytest.raises(PersistenceError, match="unusable: fsync failed"):
        writer.append([])
    writer.close()


async def test_a_cancelled_commit_ends_after_its_sync_and_records_it(
    persistence: JsonlPersistence, syncs: Syncs
) -> None:
    writer = written(persistence, "s1", syncs)
    commit, gate = await held_commit(writer, syncs)
    commit.cancel()
    for _ in range(5):
        await asyncio.sleep(0)
    assert not commit.done()  # its CancelledError waits for the sync
    gate.set()
    with pytest.raises(asyncio.CancelledError):
        await commit
    writer.commit(durable=True)  # the sync was recorded: nothing left to sync
    assert len(syncs.inodes) == 1
    writer.close()


async def test_a_close_waits_for_the_sync_in_flight(
    persistence: JsonlPersistence, syncs: Syncs, data_dir: Path
) -> None:
    writer = written(persistence, "s1", syncs)
    commit, gate = await held_commit(writer, syncs)
    threading.Timer(0.1, gate.set).start()  # opens the gate while close is (or was) called
    writer.close()  # returns after the sync: it used this writer's descriptor to the end
    await commit  # no EBADF: the sync's fstat and fdatasync ran on the open file
    with pytest.raises(PersistenceError, match="closed"):
        writer.append([])
    header = SessionHeader(id="s1", created_at=1)
    writer = persistence.open_writer(header, create=False)  # the lock was released
    writer.close()


async def test_new_logs_are_made_durable_by_the_first_durable_commit_after_them(
    persistence: JsonlPersistence, syncs: Syncs, dir_syncs: list[int], data_dir: Path
) -> None:
    writers = created(persistence, *"abc")
    assert syncs.inodes == [] and dir_syncs == []  # a creation waits for no sync
    assert sorted(os.listdir(data_dir)) == ["a.jsonl", "b.jsonl", "c.jsonl"]  # linked at once
    for writer in writers:
        writer.append(as_events(turn_bodies()))
    await writers[0].commit_async(durable=True)
    # every new log's data, its own among them, then the directory naming all three; its own
    # sync then finds its data synced
    assert syncs.inodes == [inode(data_dir / f"{name}.jsonl") for name in "abc"]
    assert dir_syncs == [inode(data_dir)]
    await writers[1].commit_async(durable=True)  # made durable by then, nothing written since
    writers[2].commit(durable=True)
    assert len(syncs.inodes) == 3 and dir_syncs == [inode(data_dir)]
    writers.append(persistence.open_writer(SessionHeader(id="d"), create=True))
    writers[0].append([Event(4, turn_bodies()[0])])
    writers[0].commit(durable=True)  # the new log and the directory first, then its own data
    assert syncs.inodes[3:] == [inode(data_dir / name) for name in ("d.jsonl", "a.jsonl")]
    assert dir_syncs == [inode(data_dir)] * 2
    for writer in writers:
        writer.close()


async def test_a_new_log_closed_before_any_sync_is_synced_by_its_path(
    persistence: JsonlPersistence, syncs: Syncs, dir_syncs: list[int], data_dir: Path
) -> None:
    persistence.open_writer(SessionHeader(id="gone"), create=True).close()
    writer = persistence.open_writer(SessionHeader(id="s1"), create=True)
    writer.commit(durable=True)
    assert syncs.inodes == [inode(data_dir / name) for name in ("gone.jsonl", "s1.jsonl")]
    assert dir_syncs == [inode(data_dir)]
    assert syncs.errors == []  # synced through a descriptor of its own, open meanwhile
    writer.close()


async def test_a_closed_new_log_whose_sync_fails_is_given_up_and_logged(
    persistence: JsonlPersistence,
    syncs: Syncs,
    dir_syncs: list[int],
    data_dir: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    persistence.open_writer(SessionHeader(id="gone"), create=True).close()
    writer = persistence.open_writer(SessionHeader(id="s1"), create=True)
    syncs.fail, syncs.fail_once = OSError(5, "Input/output error"), True
    with caplog.at_level(logging.WARNING, logger="host.sessions.new_logs"):
        writer.commit(durable=True)  # another log's failure is not this durable point's
    assert [r.getMessage() for r in caplog.records] == [
        "cannot sync session 'gone': [Errno 5] Input/output error: "
        "it may not survive a machine crash"
    ]
    assert syncs.inodes == [inode(data_dir / name) for name in ("gone.jsonl", "s1.jsonl")]
    assert dir_syncs == [inode(data_dir)]
    writer.append([Event(0, turn_bodies()[0])])
    writer.commit(durable=True)  # not tried again
    assert syncs.inodes[2:] == [inode(data_dir / "s1.jsonl")]
    writer.close()


async def test_a_new_log_broken_by_a_failed_append_is_still_made_durable(
    persistence: JsonlPersistence, syncs: Syncs, data_dir: Path
) -> None:
    child, writer = created(persistence, "child", "s1")
    write = os.write

    def partial(fd: int, data: bytes) -> int:  # a first byte, then the disk is full
        patch.setattr(os, "write", refused)
        return write(fd, bytes(data[:1]))

    def refused(fd: int, data: bytes) -> int:
        raise OSError(28, "No space left on device")

    def truncate_refused(fd: int, size: int) -> None:
        raise OSError(5, "Input/output error")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "write", partial)
        patch.setattr(os, "ftruncate", truncate_refused)
        with pytest.raises(PersistenceError, match="cannot append"):
            child.append(as_events(turn_bodies()))
    with pytest.raises(PersistenceError, match="unusable: a failed append"):
        child.append([])
    writer.commit(durable=True)  # the broken log's header still made durable before the name
    assert syncs.inodes == [inode(data_dir / name) for name in ("child.jsonl", "s1.jsonl")]
    for each in (child, writer):
        each.close()


async def test_a_new_log_whose_sync_fails_in_another_logs_settle_breaks_its_own_writer(
    persistence: JsonlPersistence, syncs: Syncs, dir_syncs: list[int], data_dir: Path
) -> None:
    failing, writer = created(persistence, "bad", "s1")
    syncs.fail, syncs.fail_once = OSError(5, "Input/output error"), True
    writer.commit(durable=True)
    with pytest.raises(PersistenceError, match="unusable: fsync failed"):
        failing.append([])  # that log is given up: its writer refuses every append
    writer.append([Event(0, turn_bodies()[0])])
    writer.commit(durable=True)  # not tried again
    assert syncs.inodes == [inode(data_dir / name) for name in ("bad.jsonl", "s1.jsonl", "s1.jsonl")]
    assert dir_syncs == [inode(data_dir)]
    assert persistence._new.pending("bad.jsonl")  # never known durable: not in the cache file
    for each in (failing, writer):
        each.close()


async def test_a_durable_commit_waits_for_a_settle_that_synced_its_log_midway(
    persistence: JsonlPersistence, syncs: Syncs, dir_syncs: list[int], data_dir: Path
) -> None:
    """Another log's settle synced this new log's data and is still syncing the next new log
    (which this one may name): this log's durable commit waits for that settle to end, then
    the directory, though its own data has nothing left to sync."""
    other = written(persistence, "other", syncs)
    parent, child = created(persistence, "parent", "child")
    parent.append(as_events(turn_bodies()))  # names the child, say
    dir_syncs.clear()
    gate = syncs.hold_at(inode(data_dir / "child.jsonl"))
    elsewhere = asyncio.ensure_future(other.commit_async(durable=True))
    await syncs.entered_once()  # the parent's data synced, the child's held
    turn_end = asyncio.ensure_future(parent.commit_async(durable=True))
    for _ in range(5):
        await asyncio.sleep(0)
    assert not turn_end.done()  # it claims nothing before the child and the directory
    gate.set()
    await asyncio.wait_for(asyncio.gather(elsewhere, turn_end), WAIT)
    assert dir_syncs == [inode(data_dir)]
    for each in (other, parent, child):
        each.close()


async def test_a_durable_commit_after_a_settle_that_failed_midway_syncs_the_directory(
    persistence: JsonlPersistence, syncs: Syncs, dir_syncs: list[int], data_dir: Path
) -> None:
    parent, child, other = created(persistence, "parent", "child", "other")
    parent.append(as_events(turn_bodies()))
    syncs.fail_at(inode(data_dir / "other.jsonl"))
    with pytest.raises(PersistenceError, match="cannot sync session 'other'"):
        other.commit(durable=True)  # its own sync failed: after the parent's and the child's
    assert dir_syncs == []
    parent.commit(durable=True)  # its data is synced, but the directory is not yet
    assert dir_syncs == [inode(data_dir)]
    for each in (other, parent, child):
        each.close()


async def test_a_writer_opened_again_is_broken_by_its_logs_failed_sync_in_a_settle_begun_before(
    persistence: JsonlPersistence, syncs: Syncs, data_dir: Path
) -> None:
    other = written(persistence, "other", syncs)
    first = persistence.open_writer(SessionHeader(id="first"), create=True)
    header = SessionHeader(id="child", created_at=1)
    persistence.open_writer(header, create=True).close()
    gate = syncs.hold_at(inode(data_dir / "first.jsonl"))
    elsewhere = asyncio.ensure_future(other.commit_async(durable=True))
    await syncs.entered_once()  # the settle has its list: the child's closed writer in it
    again = persistence.open_writer(header, create=False)
    syncs.fail_at(inode(data_dir / "child.jsonl"))
    gate.set()
    await asyncio.wait_for(elsewhere, WAIT)  # another log's failure: not its durable point's
    with pytest.raises(PersistenceError, match="unusable: fsync failed"):
        again.append([])  # synced through the writer opened since, which it broke
    for each in (other, first, again):
        each.close()


async def test_the_directory_is_synced_at_each_creation_with_always(
    data_dir: Path, syncs: Syncs, dir_syncs: list[int]
) -> None:
    persistence = JsonlPersistence(data_dir, fsync="always")
    for name in ("a", "b"):
        persistence.open_writer(SessionHeader(id=name), create=True).close()
    writer = await persistence.create_async(SessionHeader(id="c"))
    writer.close()
    assert dir_syncs == [inode(data_dir)] * 3


@pytest.fixture
def always(data_dir: Path) -> JsonlPersistence:
    """A persistence that syncs every append, and each new log before its link."""
    return JsonlPersistence(data_dir, fsync="always")


async def test_with_always_a_new_log_is_synced_on_the_sync_thread_and_linked_after_it(
    always: JsonlPersistence, syncs: Syncs, data_dir: Path
) -> None:
    persistence = always
    gate = syncs.hold()
    creating = asyncio.ensure_future(
        persistence.create_async(SessionHeader(id="s1"), as_events(turn_bodies()))
    )
    await syncs.entered_once()
    assert not (data_dir / "s1.jsonl").exists()  # linked only after its data is synced
    gate.set()
    writer = await creating
    assert threading.get_ident() not in syncs.threads
    assert len((await persistence.inspect("s1")).events) == 4
    writer.close()


async def test_a_creation_cancelled_during_its_sync_stores_nothing(
    always: JsonlPersistence, syncs: Syncs, data_dir: Path
) -> None:
    persistence = always
    gate = syncs.hold()
    creating = asyncio.ensure_future(persistence.create_async(SessionHeader(id="s1")))
    await syncs.entered_once()
    for _ in range(2):  # cancelled again while it waits for the sync: it still waits
        creating.cancel()
        for _ in range(5):
            await asyncio.sleep(0)
        assert not creating.done()
    gate.set()
    with pytest.raises(asyncio.CancelledError):
        await creating
    assert os.listdir(data_dir) == []  # not linked, the temporary file gone
    assert syncs.errors == []  # the descriptor stayed open until its sync was done
    persistence.open_writer(SessionHeader(id="s1"), create=True).close()


async def test_an_id_being_stored_is_neither_free_nor_resumable(
    always: JsonlPersistence, syncs: Syncs
) -> None:
    store = SessionStore(always, None)
    gate = syncs.hold()
    publishing = asyncio.ensure_future(store.publish_async(store.new(SessionHeader(id="s1"))))
    await syncs.entered_once()
    with pytest.raises(SessionError) as duplicate:
        store.publish(store.new(SessionHeader(id="s1")))
    assert duplicate.value.code == SessionError.DUPLICATE_SESSION
    with pytest.raises(SessionError) as live:
        await store.resume("s1")
    assert live.value.code == SessionError.ALREADY_LIVE
    gate.set()
    await publishing
    assert store.get("s1") is not None
    store.release("s1")
