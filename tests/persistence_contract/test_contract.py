"""The persistence contract: what every ``SessionPersistence`` backend must do, exactly.

Backend-specific behaviour (JSONL torn tails, file layout, the header cache; PostgreSQL
migrations) is tested next to each backend, not here.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest

from host.cancel import CancelSignal
from host.errors import HostError
from host.sessions.loading import load, resume
from host.sessions.model import (
    Event,
    EventBody,
    MessageEvent,
    PluginEvent,
    SessionHeader,
    SessionIdError,
    TurnEnd,
    TurnStart,
)
from host.sessions.persistence import PersistenceError
from host.sessions.remote import RemoteInbox, SharedPersistence
from tests.session_logs import as_events, turn_bodies, write_session

from .conftest import Backend

HOSTILE_IDS = [
    "../x",
    "a/b",
    "a\x00b",
    "a" * 4096,
    "",
    "-x",
    ".",
    "..",
    "x.jsonl",
    "/etc/passwd",
    "x'; DROP TABLE sessions; --",
    "a b",
    "é",
]


async def test_round_trip(persistence) -> None:
    bodies = turn_bodies()
    header = write_session(persistence, "s1", bodies, created_at=7, seed_length=0)
    stored = await persistence.inspect("s1")
    assert stored.header == header
    assert list(stored.events) == as_events(bodies)
    assert stored.events[0].body == TurnStart(turn_id="t1")
    assert stored.ignored_bytes == 0 and not stored.damaged_middle and stored.open_turn is None


async def test_full_header_and_awkward_content_round_trip(persistence) -> None:
    header = SessionHeader(
        id="child_1",
        parent_session="root-0",
        created_at=1_732_890_000_000_000_000,
        origin="subagent",
        delegation_depth=2,
        seed_length=1,
    )
    bodies: list[EventBody] = [
        MessageEvent(role="user", content='nul \x00 quote " backslash \\ emoji 🦀 \u2028'),
        PluginEvent(plugin="p", type="p/x", data={"nested": [1, 2.5, None, True, "x" * 1000]}),
    ]
    persistence.open_writer(header, create=True, events=as_events(bodies)).close()
    stored = await persistence.inspect("child_1")
    assert stored.header == header
    assert [e.body for e in stored.events] == bodies


async def test_data_survives_a_new_instance(backend: Backend) -> None:
    first = backend.make()
    writer = first.open_writer(SessionHeader(id="s1"), create=True)
    writer.append(as_events(turn_bodies()))
    writer.commit(durable=True)
    writer.close()
    second = backend.make()
    assert len((await second.inspect("s1")).events) == 4
    assert [h.id for h in await second.list()] == ["s1"]


async def test_append_in_batches_and_reopen(persistence) -> None:
    header = SessionHeader(id="s1")
    writer = persistence.open_writer(header, create=True)
    writer.append(as_events(turn_bodies("t1")))
    writer.append([])
    writer.append(as_events(turn_bodies("t2"), start=4))
    writer.close()
    writer = persistence.open_writer(header, create=False)
    assert writer.next_seq == 8
    writer.append([Event(8, MessageEvent(role="user", content="more"))])
    writer.close()
    stored = await persistence.inspect("s1")
    assert [e.seq for e in stored.events] == list(range(9))


async def test_header_only(persistence) -> None:
    header = write_session(persistence, "s1", [])
    stored = await load(persistence, "s1")
    assert (stored.header, stored.events, stored.repaired_bytes) == (header, (), 0)
    assert stored.closed_turn is None
    writer = persistence.open_writer(header, create=False)
    assert writer.next_seq == 0
    writer.close()


async def test_missing_session(persistence) -> None:
    for call in (persistence.inspect, partial(load, persistence)):
        with pytest.raises(PersistenceError) as err:
            await call("nope")
        assert err.value.code == "NOT_FOUND"
    with pytest.raises(PersistenceError) as err:
        persistence.open_writer(SessionHeader(id="nope"), create=False)
    assert err.value.code == "NOT_FOUND"
    assert await persistence.list() == []


@pytest.mark.parametrize("bad", HOSTILE_IDS, ids=range(len(HOSTILE_IDS)))
async def test_hostile_ids_are_refused_and_store_nothing(persistence, bad: str) -> None:
    write_session(persistence, "keep", [])
    with pytest.raises(SessionIdError):
        await persistence.inspect(bad)
    with pytest.raises(SessionIdError):
        await load(persistence, bad)
    with pytest.raises(SessionIdError):
        SessionHeader(id=bad)
    assert [h.id for h in await persistence.list()] == ["keep"]


async def test_open_turn_closed_by_load_only(persistence) -> None:
    write_session(persistence, "s1", turn_bodies("t9", close=False))
    inspected = await persistence.inspect("s1")
    assert inspected.open_turn == "t9" and len(inspected.events) == 3
    assert len((await persistence.inspect("s1")).events) == 3  # inspect never repairs
    loaded = await load(persistence, "s1")
    assert loaded.closed_turn == "t9"
    assert loaded.events[-1] == Event(3, TurnEnd(turn_id="t9", stop_reason="interrupted"))
    again = await load(persistence, "s1")
    assert again.closed_turn is None and again.events == loaded.events
    assert (await persistence.inspect("s1")).events == loaded.events


async def test_a_backend_hands_an_open_turn_over_as_stored(persistence) -> None:
    """Closing a turn left open is the runtime's rule (``host.sessions.loading``), written
    once above the backends: a backend's ``resume`` hands the log over as stored, with the
    writer that continues it."""
    write_session(persistence, "s1", turn_bodies("t9", close=False))
    resumed = await persistence.resume("s1")
    assert (resumed.stored.open_turn, resumed.stored.closed_turn) == ("t9", None)
    assert len(resumed.stored.events) == 3 and resumed.writer.next_seq == 3
    resumed.writer.close()
    assert (await persistence.inspect("s1")).open_turn == "t9"


async def test_only_a_store_shared_by_hosts_has_an_inbox(backend: Backend, persistence) -> None:
    """Messages between hosts are an inbox beside the store, not a job of the store itself."""
    assert isinstance(persistence, SharedPersistence) == (backend.kind == "postgres")
    assert not isinstance(persistence, RemoteInbox)


async def test_lock_in_process(persistence) -> None:
    header = write_session(persistence, "s1", turn_bodies())
    writer = persistence.open_writer(header, create=False)
    assert writer.next_seq == 4
    with pytest.raises(PersistenceError) as err:
        persistence.open_writer(header, create=False)
    assert err.value.code == "LOCKED" and "locked" in err.value.message
    with pytest.raises(PersistenceError) as err:
        await load(persistence, "s1")
    assert err.value.code == "LOCKED"
    assert len((await persistence.inspect("s1")).events) == 4  # readers never lock
    assert [h.id for h in await persistence.list()] == ["s1"]
    writer.close()
    writer.close()  # idempotent
    persistence.open_writer(header, create=False).close()


async def test_writer_of_a_new_session_holds_the_lock(persistence) -> None:
    header = SessionHeader(id="s1")
    writer = persistence.open_writer(header, create=True)
    with pytest.raises(PersistenceError) as err:
        persistence.open_writer(header, create=False)
    assert err.value.code == "LOCKED"
    writer.close()


async def test_lock_across_processes(backend: Backend, persistence) -> None:
    """A writer held by another process makes this one LOCKED until that process exits."""
    header = write_session(persistence, "s1", [], created_at=3)
    if backend.kind == "jsonl":
        setup = (
            "from host.sessions.jsonl import JsonlPersistence\n"
            f"p = JsonlPersistence({str(persistence.data_dir)!r})\n"
        )
    else:
        setup = (
            "from agent_host_postgres.persistence import PostgresPersistence\n"
            f"p = PostgresPersistence({persistence.dsn!r}, schema={persistence.schema!r})\n"
        )
    code = setup + textwrap.dedent(
        """
        import sys
        from host.sessions.model import SessionHeader
        w = p.open_writer(SessionHeader(id="s1", created_at=3), create=False)
        print("held", flush=True)
        sys.stdin.readline()
        w.close()
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        with pytest.raises(PersistenceError) as err:
            persistence.open_writer(header, create=False)
        assert err.value.code == "LOCKED"
    finally:
        child.communicate("\n", timeout=30)
    assert child.returncode == 0
    persistence.open_writer(header, create=False).close()


async def test_create_twice(persistence) -> None:
    header = write_session(persistence, "s1", turn_bodies())
    with pytest.raises(PersistenceError) as err:
        persistence.open_writer(header, create=True)
    assert err.value.code == "ALREADY_EXISTS"
    with pytest.raises(PersistenceError) as err:
        persistence.open_writer(SessionHeader(id="s1", created_at=9), create=True, events=[])
    assert err.value.code == "ALREADY_EXISTS"
    assert len((await persistence.inspect("s1")).events) == 4


async def test_create_is_all_or_nothing(persistence) -> None:
    bad = [
        Event(0, MessageEvent(role="user", content="ok")),
        Event(1, PluginEvent(plugin="p", type="p/x", data=object())),
    ]
    with pytest.raises(PersistenceError) as err:
        persistence.open_writer(SessionHeader(id="s1"), create=True, events=bad)
    assert err.value.code == "PERSISTENCE_FAILED"
    with pytest.raises(PersistenceError) as err:
        persistence.open_writer(
            SessionHeader(id="s2"), create=True, events=as_events(turn_bodies(), 1)
        )
    assert err.value.code == "PERSISTENCE_FAILED"
    assert await persistence.list() == []
    with pytest.raises(ValueError):
        persistence.open_writer(SessionHeader(id="s3"), create=False, events=bad[:1])


async def test_append_rules(persistence) -> None:
    writer = persistence.open_writer(SessionHeader(id="s1"), create=True)
    bad_batch = [
        Event(0, MessageEvent(role="user", content="ok")),
        Event(1, PluginEvent(plugin="p", type="p/x", data=object())),
    ]
    with pytest.raises(PersistenceError) as err:
        writer.append(bad_batch)
    assert err.value.code == "PERSISTENCE_FAILED"
    with pytest.raises(PersistenceError) as err:
        writer.append([Event(5, MessageEvent(role="user", content="gap"))])
    assert err.value.code == "PERSISTENCE_FAILED"
    assert (await persistence.inspect("s1")).events == ()  # nothing, not even half a batch
    writer.append(bad_batch[:1])
    writer.commit()
    writer.commit(durable=True)
    writer.close()
    for late in (
        lambda: writer.append([Event(1, MessageEvent(role="user", content="late"))]),
        lambda: writer.commit(durable=True),
    ):
        with pytest.raises(PersistenceError) as err:
            late()
        assert err.value.code == "PERSISTENCE_FAILED"
    assert len((await persistence.inspect("s1")).events) == 1


async def test_append_is_visible_to_readers_when_it_returns(backend: Backend) -> None:
    writer = backend.make().open_writer(SessionHeader(id="s1"), create=True)
    reader = backend.make()
    for seq in range(5):
        writer.append([Event(seq, MessageEvent(role="user", content=str(seq)))])
        assert len((await reader.inspect("s1")).events) == seq + 1
    writer.close()


async def test_reopen_refuses_another_header(persistence) -> None:
    header = write_session(persistence, "s1", turn_bodies())
    with pytest.raises(PersistenceError) as err:
        persistence.open_writer(SessionHeader(id="s1", created_at=1), create=False)
    assert err.value.code == "CORRUPT"
    writer = persistence.open_writer(header, create=False)  # the refusal released the lock
    assert writer.next_seq == 4
    writer.close()


async def test_list_headers_sorted(persistence) -> None:
    write_session(persistence, "b", [], created_at=5)
    write_session(persistence, "a", [], created_at=5)
    write_session(persistence, "c", turn_bodies(), created_at=1)
    write_session(persistence, "d", [], created_at=2, parent_session="c", origin="subagent")
    listed = await persistence.list()
    assert [h.id for h in listed] == ["c", "d", "a", "b"]
    assert listed[1] == SessionHeader(id="d", created_at=2, parent_session="c", origin="subagent")
    assert listed == sorted(listed, key=SessionHeader.sort_key)


async def test_cancelled(persistence) -> None:
    write_session(persistence, "s1", turn_bodies(close=False))
    before = await persistence.inspect("s1")
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
    after = await persistence.inspect("s1")
    assert after.events == before.events and after.open_turn is not None


async def test_resume_hands_the_lock_taken_for_the_read_to_the_writer(backend: Backend) -> None:
    """From the moment ``resume`` returns, another host can neither resume, load nor open
    the session: the lock taken to read (and repair) it is the one the writer holds."""
    here, other = backend.make(), backend.make()
    header = write_session(here, "s1", turn_bodies("t9", close=False))
    resumed: Any = await resume(here, "s1")  # the backend's own writer
    assert resumed.stored.header == header and resumed.stored.closed_turn == "t9"
    assert resumed.writer.session_id == "s1" and resumed.writer.next_seq == 4
    for attempt in (
        lambda: other.resume("s1"),
        lambda: load(other, "s1"),
        lambda: other.resume("s1"),
    ):
        with pytest.raises(PersistenceError) as err:
            await attempt()
        assert err.value.code == "LOCKED"
    with pytest.raises(PersistenceError) as err:
        other.open_writer(header, create=False)
    assert err.value.code == "LOCKED"
    resumed.writer.append([Event(4, TurnStart(turn_id="t10"))])
    resumed.writer.close()
    again = await resume(other, "s1")
    assert [e.seq for e in again.stored.events] == list(range(6))
    assert again.stored.closed_turn == "t10"
    again.writer.close()


async def test_concurrent_resumes_from_two_hosts_never_interleave(backend: Backend) -> None:
    """Two hosts resume the same session at the same time, over and over: exactly one wins
    each round, and its first append continues exactly the log it read (nobody slipped in
    between to repair or append)."""
    hosts = (backend.make(), backend.make())
    write_session(hosts[0], "s1", [MessageEvent(role="user", content="x" * 40_000)])
    for round_ in range(8):
        outcomes = await asyncio.gather(
            *(resume(host, "s1") for host in hosts), return_exceptions=True
        )
        winners = [o for o in outcomes if not isinstance(o, BaseException)]
        losers = [o for o in outcomes if isinstance(o, BaseException)]
        assert len(winners) == 1, outcomes
        assert all(isinstance(e, PersistenceError) and e.code == "LOCKED" for e in losers)
        (won,) = winners
        seq = len(won.stored.events)
        won.writer.append([Event(seq, TurnStart(turn_id=f"t{round_}"))])  # left open
        won.writer.close()
    stored = await hosts[1].inspect("s1")
    assert [e.seq for e in stored.events] == list(range(1 + 8 * 2 - 1))
    assert stored.open_turn == "t7"


class HeldInWorker(CancelSignal):
    """Never set; consulted from a worker thread (which the backend does while it holds the
    session's lock, before handing it over), it blocks until ``go`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.inside = threading.Event()
        self.go = threading.Event()

    def raise_if_set(self, error: Callable[[str, str], HostError] = HostError) -> None:
        if threading.current_thread() is not threading.main_thread():
            self.inside.set()
            self.go.wait(30)
        super().raise_if_set(error)


async def test_a_resume_cancelled_mid_read_leaves_the_session_unlocked(backend: Backend) -> None:
    persistence = backend.make()
    write_session(persistence, "s1", [MessageEvent(role="user", content="x" * 40_000)])
    held = HeldInWorker()
    task = asyncio.ensure_future(persistence.resume("s1", signal=held))
    assert await asyncio.to_thread(held.inside.wait, 30)  # the worker holds the lock now
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    held.go.set()  # the worker finishes and hands a writer to nobody
    for _ in range(300):
        try:
            resumed = await backend.make().resume("s1")
        except PersistenceError as err:
            assert err.code == "LOCKED"
            await asyncio.sleep(0.01)
            continue
        resumed.writer.close()
        return
    pytest.fail("the cancelled resume kept the session locked")


async def test_a_voice_outlives_its_writers_orderly_close(backend: Backend) -> None:
    """A message on behalf of a session is sent only under its writer's ``Voice``. It holds
    while the writer is open (nobody can take the session from it then), and for good after
    its orderly close, also once another writer took the session in order and wrote (a
    settled child's notice is sent after its release, maybe after a cold resume elsewhere).
    A voice from a writer whose lease was taken over while it was open is backend-specific
    (PostgreSQL's ``test_voices``): a JSONL lock cannot be taken from an open writer."""
    here, other = backend.make(), backend.make()
    header = write_session(here, "s1", turn_bodies())
    writer = here.open_writer(header, create=False)
    voice = writer.voice()
    assert voice.session_id == "s1"
    assert await voice.holds()
    with pytest.raises(PersistenceError) as err:
        await other.resume("s1")
    assert err.value.code == "LOCKED"
    assert await voice.holds()
    writer.close()
    assert await voice.holds()

    taken = await other.resume("s1")  # a later writer, after the release: in order
    taken.writer.append([Event(4, TurnStart(turn_id="t2"))])
    assert await voice.holds()
    assert await taken.writer.voice().holds()
    taken.writer.close()
    again = here.open_writer(header, create=False)
    assert await voice.holds()
    again.close()
