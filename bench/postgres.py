"""PostgreSQL persistence benchmark: appends, listing, takeover and delivery, against JSONL.

Not a test. Run from the project root with the project venv and a PostgreSQL server::

    (source .ci/postgres.sh && .venv/bin/python bench/postgres.py)
    .venv/bin/python bench/postgres.py --dsn postgresql://user@host/db [--big]

The DSN comes from ``--dsn`` or ``AGENT_HOST_TEST_POSTGRES_DSN``; everything PostgreSQL-side
lives in a fresh schema ``bench_<random>`` that is dropped at the end. JSONL data goes to a
temporary directory (``--dir`` to choose the disk). Measured in the same run:

* **Appends** (``SessionWriter.append``, called synchronously as ``Session.append`` does):
  ``--sessions`` sessions × ``--appends`` appends, of one event (``commit(durable=True)`` at
  every turn end, i.e. every 10 events) and of a 10-event turn batch (one commit per batch),
  the same pre-built events (``TurnStart``, ``MessageEvent``s, ``TurnEnd``) on PostgreSQL and
  on JSONL with ``fsync="never"`` and ``fsync="turn"``. Only the append/commit calls are
  timed (writers are opened and closed outside the clock), after one discarded warm-up
  round. Throughput is the best of ``--repeat`` interleaved rounds; per-append p50/p99 pool
  every round.
* **Append latency components** on PostgreSQL, interleaved: the codec encoding alone, an
  empty query (what the pool's connection check sends at every checkout), ``SELECT 1`` and a
  plain one-row ``INSERT`` (round trip + commit, no lease) on a direct and on a pooled
  connection, the fenced statement (lease renewal + insert + epoch check) on a direct
  connection, and ``writer.append`` itself.
* **list_children** over ``--children`` continuable children (a descriptor then messages,
  ``--child-events`` events each) of one parent plus ``--unrelated`` other sessions, the same
  corpus written through each backend's ``open_writer``: ``list()`` alone, read-once
  (``list()`` + one ``inspect`` per child, 8 at a time: the cold floor), cold ``list_children``
  (a new, empty identity index each time), warm (index trusted) and warm through a fresh
  ``IdentityIndex`` object (as another process would). Medians of ``--cold-runs``/``--runs``.
  On PostgreSQL listing also runs one ``residency`` query for all children (timed alone too).
* **Takeover after a kill**: a child process opens a writer (takes the lease, heartbeat
  running) and is SIGKILLed; another ``PostgresPersistence`` polls ``open_writer`` every
  ``--poll`` seconds until it succeeds. Reported per ``--ttl``: the time from the kill to the
  successful open, and the lease's remaining life at the kill (read from the database just
  before it) — the takeover is that wait plus polling and acquisition.
* **Cross-host delivery** (NOTIFY path), at the ``RemoteInbox`` level: host B's
  ``send_remote`` to a session host A holds and ``watch``es, until A has appended the
  acceptance (``measure_delivery``); p50/p99 of ``--notifies`` messages, one in flight.
  Measured only when ``PostgresPersistence`` has the API, else "not measured"; the raw
  ``LISTEN``/``NOTIFY`` round trip between two connections is printed as its floor either way.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Literal

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import psycopg  # noqa: E402
from agent_host_postgres import leases  # noqa: E402
from agent_host_postgres.persistence import PostgresPersistence  # noqa: E402
from agent_host_postgres.writer import encode_bodies  # noqa: E402

from host.sessions.codec import BACKEND  # noqa: E402
from host.sessions.jsonl import JsonlPersistence  # noqa: E402
from host.sessions.model import (  # noqa: E402
    Event,
    EventBody,
    InboxAccepted,
    MessageEvent,
    SessionHeader,
    SubagentDescriptorEvent,
    TurnEnd,
    TurnStart,
)
from host.sessions.persistence import PersistenceError, SessionPersistence  # noqa: E402
from host.sessions.projections import Projections  # noqa: E402
from host.sessions.store import SessionStore  # noqa: E402
from host.subagents.identity import IDENTITY_UNIT  # noqa: E402
from host.subagents.index import IdentityIndex  # noqa: E402
from host.subagents.listing import SubagentListing  # noqa: E402

DSN_ENV = "AGENT_HOST_TEST_POSTGRES_DSN"
TURN = 10
PARENT = "parent"


# -- helpers ------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def turn_body(i: int) -> EventBody:
    """Event ``i`` of a stream of 10-event turns: start, user, 4 × (assistant, tool), end."""
    r, turn = i % TURN, f"t{i // TURN}"
    if r == 0:
        return TurnStart(turn_id=turn)
    if r == TURN - 1:
        return TurnEnd(turn_id=turn, stop_reason="completed")
    if r == 1:
        return MessageEvent(role="user", content="please do it " * 8, message_id=f"u{i}")
    if r % 2 == 0:
        return MessageEvent(role="assistant", content="Let me look. " * 12, message_id=f"a{i}")
    return MessageEvent(
        role="tool", content="a line of the file\n" * 10, message_id=f"r{i}", tool_call_id="c1"
    )


def timed_calls(calls: Sequence[Callable[[], object]]) -> list[float]:
    """Each call's duration in seconds (GC collected before, not paused)."""
    gc.collect()
    out = []
    clock = time.perf_counter
    for fn in calls:
        start = clock()
        fn()
        out.append(clock() - start)
    return out


async def timed(make: Callable[[], Awaitable[Any]], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        await make()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def drop_schema(dsn: str, schema: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


# -- appends ------------------------------------------------------------------------------


class Backends:
    """The persistences compared; JSONL ones get a fresh directory per round."""

    def __init__(self, dsn: str, schema: str, scratch: Path) -> None:
        self.pg = PostgresPersistence(dsn, schema=schema)
        self.scratch = scratch
        self.rounds = 0

    def make(self, name: str) -> SessionPersistence:
        if name == "postgres":
            return self.pg
        self.rounds += 1
        fsync: Literal["never", "turn"] = "never" if name.endswith("never") else "turn"
        return JsonlPersistence(self.scratch / f"{name}-{self.rounds}", fsync=fsync)


NAMES = ("jsonl fsync=never", "jsonl fsync=turn", "postgres")


def append_round(
    persistence: SessionPersistence, tag: str, sessions: int, batches: list[list[Event]]
) -> list[float]:
    """One round: every session gets every batch; the duration of each append (+ commit)."""
    writers = [
        persistence.open_writer(SessionHeader(id=f"{tag}-{s}", created_at=s + 1), create=True)
        for s in range(sessions)
    ]
    calls: list[Callable[[], object]] = []
    for writer in writers:
        for batch in batches:
            ends_turn = isinstance(batch[-1].body, TurnEnd)

            def call(w: Any = writer, b: list[Event] = batch, end: bool = ends_turn) -> None:
                w.append(b)
                if end:
                    w.commit(durable=True)

            calls.append(call)
    try:
        return timed_calls(calls)
    finally:
        for writer in writers:
            writer.close()


def bench_appends(
    backends: Backends, sessions: int, appends: int, repeat: int
) -> dict[tuple[str, str], dict[str, float]]:
    shapes = {
        "1 event": [[Event(i, turn_body(i))] for i in range(appends)],
        f"{TURN}-event turn": [
            [Event(i, turn_body(i)) for i in range(k * TURN, (k + 1) * TURN)]
            for k in range(appends)
        ],
    }
    results: dict[tuple[str, str], dict[str, float]] = {}
    for shape, batches in shapes.items():
        per_append = len(batches[0])
        samples: dict[str, list[list[float]]] = {name: [] for name in NAMES}
        for name in NAMES:  # warm-up, discarded: imports, first files, prepared statements
            append_round(backends.make(name), f"w{per_append}-{NAMES.index(name)}", 2, batches)
        for r in range(repeat):
            order = NAMES if r % 2 == 0 else tuple(reversed(NAMES))
            for name in order:
                tag = f"a{per_append}-{NAMES.index(name)}-{r}"
                samples[name].append(append_round(backends.make(name), tag, sessions, batches))
        print(
            f"appends: {sessions} sessions x {appends} appends of {shape} "
            f"({sessions * appends * per_append:,} events per round, best of {repeat})"
        )
        print(
            f"  {'backend':<18} {'appends/s':>10} {'events/s':>10} {'p50 us':>8} {'p99 us':>8}"
            f"  vs never  vs turn"
        )
        rates = {}
        for name in NAMES:
            best = min(sum(times) for times in samples[name])
            pooled = [t for times in samples[name] for t in times]
            rates[name] = (sessions * appends) / best
            results[(shape, name)] = {
                "appends_per_s": rates[name],
                "events_per_s": rates[name] * per_append,
                "p50_us": percentile(pooled, 0.5) * 1e6,
                "p99_us": percentile(pooled, 0.99) * 1e6,
            }
        for name in NAMES:
            row = results[(shape, name)]
            print(
                f"  {name:<18} {row['appends_per_s']:>10,.0f} {row['events_per_s']:>10,.0f} "
                f"{row['p50_us']:>8.0f} {row['p99_us']:>8.0f}"
                f"  {rates[name] / rates[NAMES[0]]:>7.2f}x {rates[name] / rates[NAMES[1]]:>6.2f}x"
            )
    return results


def bench_components(dsn: str, schema: str, pg: PostgresPersistence, count: int) -> None:
    """Where a PostgreSQL append's time goes: pool checkout, round trip, commit, lease."""
    event = Event(1, turn_body(1))
    body = encode_bodies([event])[0]
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            f"CREATE TABLE {schema}.bench_plain (session_id text, seq bigint, body text,"
            " PRIMARY KEY (session_id, seq))"
        )
    pool = pg._pool  # the pool appends use (its checkout runs ConnectionPool.check_connection)
    plain_seqs = iter(range(10**9))
    writer = pg.open_writer(SessionHeader(id="components"), create=True)
    seqs = iter(range(10**9))
    # A second session whose lease is held, written with the fenced statement directly.
    held = pg.open_writer(SessionHeader(id="components-direct"), create=True)
    held_seqs = iter(range(10**9))

    def pooled_select() -> None:
        with pool.connection() as conn:
            conn.execute("SELECT 1").fetchone()

    def pooled_insert() -> None:
        with pool.connection() as conn:
            conn.execute(
                "INSERT INTO bench_plain (session_id, seq, body) VALUES (%s, %s, %s)",
                ("s", next(plain_seqs), body),
            )

    def fenced_append() -> None:
        writer.append([Event(next(seqs), event.body)])

    with psycopg.connect(dsn, autocommit=True) as direct:
        direct.execute(f"SET search_path TO {schema}")

        def direct_select() -> None:
            direct.execute("SELECT 1").fetchone()

        def direct_empty() -> None:
            direct.execute("")

        def direct_insert() -> None:
            direct.execute(
                "INSERT INTO bench_plain (session_id, seq, body) VALUES (%s, %s, %s)",
                ("s", next(plain_seqs), body),
            )

        def direct_fenced() -> None:
            assert leases.fenced_insert(
                direct,
                session_id="components-direct",
                owner=pg.host_id,
                epoch=held.epoch,
                ttl=pg.lease_ttl,
                seqs=[next(held_seqs)],
                bodies=[body],
                status=None,
            )

        rows: dict[str, Callable[[], object]] = {
            "encode one event (codec)": lambda: encode_bodies([event]),
            "empty query (the pool's check)": direct_empty,
            "SELECT 1, direct connection": direct_select,
            "SELECT 1, pooled connection": pooled_select,
            "INSERT 1 row, direct (autocommit)": direct_insert,
            "INSERT 1 row, pooled (autocommit)": pooled_insert,
            "fenced statement 1 event, direct": direct_fenced,
            "writer.append 1 event (pooled)": fenced_append,
        }
        samples: dict[str, list[float]] = {name: [] for name in rows}
        for _ in range(5):  # interleaved fifths: every row sees the same machine load
            for name, fn in rows.items():
                samples[name] += timed_calls([fn] * (count // 5))
    writer.close()
    held.close()
    print(f"PostgreSQL append latency components ({count} calls each, interleaved)")
    print(f"  {'component':<36} {'p50 us':>8} {'p99 us':>8} {'mean us':>8}")
    for name, times in samples.items():
        print(
            f"  {name:<36} {percentile(times, 0.5) * 1e6:>8.1f} "
            f"{percentile(times, 0.99) * 1e6:>8.1f} {statistics.fmean(times) * 1e6:>8.1f}"
        )


# -- listing ------------------------------------------------------------------------------


def descriptor() -> dict[str, Any]:
    return {"version": 2, "mode": "continuable", "provider": "spawn", "label": "worker"}


def child_events(n_events: int) -> list[Event]:
    events = [Event(0, SubagentDescriptorEvent(descriptor()))]
    while len(events) < n_events:
        seq = len(events)
        role: Literal["user", "assistant"] = "user" if seq % 2 else "assistant"
        text = f"message {seq}: " + "lorem ipsum dolor sit amet " * 4
        events.append(Event(seq, MessageEvent(role=role, content=text, message_id=f"m{seq}")))
    return events


def build_corpus(
    persistence: SessionPersistence, unrelated: int, children: int, n_events: int
) -> list[str]:
    small = [Event(0, TurnStart(turn_id="t0")), Event(1, TurnEnd("t0", "completed"))]
    for i in range(unrelated):
        header = SessionHeader(id=f"u{i:05}", created_at=i + 1)
        persistence.open_writer(header, create=True, events=small).close()
    header = SessionHeader(id=PARENT, created_at=1)
    persistence.open_writer(header, create=True, events=small).close()
    body = child_events(n_events)
    ids = []
    for i in range(children):
        header = SessionHeader(
            id=f"c{i:05}", parent_session=PARENT, created_at=10 + i, origin="subagent"
        )
        persistence.open_writer(header, create=True, events=body).close()
        ids.append(header.id)
    return ids


def listing_over(persistence: SessionPersistence, index: IdentityIndex) -> SubagentListing:
    projections = Projections()
    projections.register(IDENTITY_UNIT)
    store = SessionStore(persistence, projections)
    return SubagentListing(
        sessions=store, projections=projections, persistence=persistence, index=index
    )


async def read_once(persistence: SessionPersistence, ids: list[str]) -> None:
    await persistence.list()
    gate = asyncio.Semaphore(8)

    async def one(sid: str) -> None:
        async with gate:
            await persistence.inspect(sid)

    await asyncio.gather(*(one(s) for s in ids))


async def listing_one(
    name: str, persistence: SessionPersistence, index_dir: Path, args: argparse.Namespace
) -> dict[str, float]:
    start = time.perf_counter()
    ids = build_corpus(persistence, args.unrelated, args.children, args.child_events)
    built = time.perf_counter() - start
    out: dict[str, float] = {"build": built}
    out["list"] = await timed(lambda: persistence.list(), args.runs)
    out["read-once"] = await timed(lambda: read_once(persistence, ids), args.cold_runs)
    colds = []
    for run in range(args.cold_runs):  # each through a new, empty index
        index_path = index_dir / f"cold{run}" / ".index" / "identity.jsonl"
        listing = listing_over(persistence, IdentityIndex(index_path))
        start = time.perf_counter()
        entries = await listing.list_children(PARENT)
        colds.append(time.perf_counter() - start)
        assert len(entries) == args.children, (name, len(entries))
    out["cold"] = statistics.median(colds)
    out["warm"] = await timed(lambda: listing.list_children(PARENT), args.runs)
    out["fresh"] = await timed(
        lambda: listing_over(persistence, IdentityIndex(index_path)).list_children(PARENT),
        args.runs,
    )
    residency = getattr(persistence, "residency", None)
    if residency is not None:
        out["residency"] = await timed(lambda: residency(ids), args.runs)
    return out


async def bench_listing(backends: Backends, args: argparse.Namespace) -> None:
    print(
        f"list_children: {args.children} children x {args.child_events} events + "
        f"{args.unrelated} unrelated sessions (median of {args.cold_runs} cold, {args.runs} warm)"
    )
    jsonl_dir = backends.scratch / "listing-jsonl"
    results = {
        "jsonl fsync=never": await listing_one(
            "jsonl", JsonlPersistence(jsonl_dir, fsync="never"), jsonl_dir, args
        ),
        "postgres": await listing_one(
            "postgres", backends.pg, backends.scratch / "listing-pg", args
        ),
    }
    rows = (
        ("build", "corpus written (open_writer)"),
        ("list", "persistence.list() alone"),
        ("read-once", "read-once (list + 1 inspect/child)"),
        ("cold", "cold list_children"),
        ("warm", "warm list_children"),
        ("fresh", "warm, fresh index object"),
        ("residency", "residency(1 query, all children)"),
    )
    print(f"  {'measurement':<36} {'jsonl ms':>10} {'postgres ms':>12} {'pg / jsonl':>10}")
    jsonl, pg = results["jsonl fsync=never"], results["postgres"]
    for key, label in rows:
        j, p = jsonl.get(key), pg.get(key)
        ratio = f"{p / j:>9.2f}x" if j and p else ""
        print(
            f"  {label:<36} {'' if j is None else f'{j * 1e3:10.1f}':>10} "
            f"{'' if p is None else f'{p * 1e3:12.1f}':>12} {ratio:>10}"
        )
    print(
        f"  cold / read-once: jsonl {jsonl['cold'] / jsonl['read-once']:.2f}, "
        f"postgres {pg['cold'] / pg['read-once']:.2f}; cold / warm: jsonl "
        f"{jsonl['cold'] / jsonl['warm']:.0f}x, postgres {pg['cold'] / pg['warm']:.0f}x"
    )


# -- takeover -----------------------------------------------------------------------------

HOLDER = """
import sys, time
from agent_host_postgres.persistence import PostgresPersistence
from host.sessions.model import SessionHeader
dsn, schema, sid, ttl = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
persistence = PostgresPersistence(dsn, schema=schema, lease_ttl=ttl, pool_size=2)
writer = persistence.open_writer(SessionHeader(id=sid, created_at=1), create=True)
print("ready", flush=True)
time.sleep(3600)
"""


def lease_remaining(dsn: str, schema: str, sid: str) -> float:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            f"SELECT extract(epoch FROM expires_at - now()) FROM {schema}.leases"
            " WHERE session_id = %s",
            (sid,),
        ).fetchone()
    assert row is not None
    return float(row[0])


def one_takeover(dsn: str, schema: str, ttl: float, trial: int, poll: float) -> tuple[float, float]:
    """(kill → successful open_writer elsewhere, lease remaining at the kill) in seconds."""
    sid = f"victim-{str(ttl).replace('.', '_')}-{trial}"
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, dsn, schema, sid, str(ttl)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert child.stdout is not None
        if child.stdout.readline().strip() != "ready":
            raise RuntimeError("the lease holder did not start")
        time.sleep(ttl * (0.3 + 0.4 * (trial % 2)))  # let the heartbeat run for a while
        other = PostgresPersistence(dsn, schema=schema, lease_ttl=ttl, pool_size=2)
        header = SessionHeader(id=sid, created_at=1)
        try:
            other.open_writer(header, create=False).close()
            raise RuntimeError("the lease was not held")
        except PersistenceError as exc:
            assert exc.code == PersistenceError.LOCKED, exc
        remaining = lease_remaining(dsn, schema, sid)
        killed = time.perf_counter()
        child.send_signal(signal.SIGKILL)
        while True:
            try:
                writer = other.open_writer(header, create=False)
            except PersistenceError as exc:
                if exc.code != PersistenceError.LOCKED:
                    raise
                time.sleep(poll)
                continue
            took = time.perf_counter() - killed
            writer.close()
            break
        other.close()
        return took, remaining
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()


def bench_takeover(dsn: str, schema: str, ttls: list[float], trials: int, poll: float) -> None:
    print(f"takeover after SIGKILL of the lease holder (poll every {poll * 1e3:.0f} ms)")
    print(
        f"  {'lease_ttl s':>11} {'trial':>5} {'remaining at kill s':>19} {'takeover s':>10}"
        f" {'takeover - remaining ms':>23}"
    )
    for ttl in ttls:
        for trial in range(trials):
            took, remaining = one_takeover(dsn, schema, ttl, trial, poll)
            print(
                f"  {ttl:>11.1f} {trial:>5} {remaining:>19.3f} {took:>10.3f}"
                f" {(took - remaining) * 1e3:>23.1f}"
            )


# -- cross-host delivery ------------------------------------------------------------------


def delivery_api() -> str | None:
    """Where the cross-host delivery API lives, or None when this tree does not have it."""
    if all(
        hasattr(PostgresPersistence, attr) for attr in ("send_remote", "pending_remote", "watch")
    ):
        return "PostgresPersistence.send_remote/pending_remote/watch"
    return None


def notify_floor(dsn: str, count: int) -> list[float]:
    """Raw LISTEN/NOTIFY: from ``pg_notify`` sent on one connection to its receipt on another."""
    times = []
    with (
        psycopg.connect(dsn, autocommit=True) as listener,
        psycopg.connect(dsn, autocommit=True) as sender,
    ):
        listener.execute("LISTEN bench_delivery")
        for i in range(count):
            start = time.perf_counter()
            sender.execute("SELECT pg_notify('bench_delivery', %s)", (str(i),))
            got = list(listener.notifies(timeout=5.0, stop_after=1))
            times.append(time.perf_counter() - start)
            assert got and got[0].payload == str(i), got
    return times


async def measure_delivery(dsn: str, schema: str, count: int) -> dict[str, list[float]]:
    """Host B sends ``count`` messages, one at a time, to a session host A holds.

    (Imports ``host.sessions.remote`` here: the module is absent from trees without the API.)

    Two ``PostgresPersistence`` objects stand for the two hosts (one process, one event loop).
    A runs what ``host.agents.remote.RemoteReceiver`` runs on a wake-up: ``pending_remote``,
    then the durable acceptance (an ``InboxAccepted`` appended by its writer, which also drops
    the queued row). Times from the start of ``send_remote`` to: its return (queued + NOTIFY
    committed), A's wake-up on its event loop, the acceptance committed.
    """
    from host.sessions.remote import RemoteMessage

    receiver = PostgresPersistence(dsn, schema=schema)
    sender = PostgresPersistence(dsn, schema=schema)
    loop = asyncio.get_running_loop()
    woken = asyncio.Event()

    def wake_up() -> None:  # called from the listener thread
        loop.call_soon_threadsafe(woken.set)

    stop = receiver.watch(wake_up)
    header = SessionHeader(id="delivery-target", created_at=1)
    writer = receiver.open_writer(header, create=True)
    waiting: dict[str, asyncio.Future[tuple[float, float]]] = {}

    async def receive() -> None:
        while True:
            await woken.wait()
            woken.clear()
            wake = time.perf_counter()
            for message in await receiver.pending_remote():
                if message.session_id != header.id or message.orphan:
                    continue
                accepted = InboxAccepted(
                    message.message_id, message.delivery, message.content, message.source
                )
                writer.append([Event(writer.next_seq, accepted)])
                future = waiting.pop(message.message_id, None)
                if future is not None and not future.done():
                    future.set_result((wake, time.perf_counter()))

    out: dict[str, list[float]] = {"sent": [], "woken": [], "delivered": []}
    try:
        await asyncio.wait_for(woken.wait(), 10)  # the listener's first (catch-up) wake
        task = asyncio.create_task(receive())
        for i in range(count):
            message_id = f"bench-{i}"
            arrived = waiting[message_id] = loop.create_future()
            start = time.perf_counter()
            queued = await sender.send_remote(
                RemoteMessage(
                    message_id=message_id,
                    session_id=header.id,
                    delivery="followup",
                    content="please continue with the next file " * 3,
                    source=None,
                    sender_session=None,
                )
            )
            sent = time.perf_counter()
            assert queued, "the target was not held by another host"
            wake, done = await asyncio.wait_for(arrived, 10)  # may be set before send returns
            out["sent"].append(sent - start)
            out["woken"].append(wake - start)
            out["delivered"].append(done - start)
        task.cancel()
        left = await sender.pending_remote() + await receiver.pending_remote()
        assert not left, f"{len(left)} messages still queued"
        assert writer.next_seq == count, writer.next_seq
    finally:
        stop()
        writer.close()
        receiver.close()
        sender.close()
    return out


def bench_delivery(dsn: str, schema: str, count: int) -> None:
    """Cross-host delivery latency p50/p99 over the NOTIFY path, and its raw NOTIFY floor.

    Measured only when the persistence has the ``RemoteInbox`` API; without it (or when it
    fails) nothing is faked.
    """
    floor = notify_floor(dsn, count)
    print(
        f"NOTIFY floor ({count} pg_notify -> receipt on another connection): "
        f"p50 {percentile(floor, 0.5) * 1e3:.2f} ms, p99 {percentile(floor, 0.99) * 1e3:.2f} ms"
    )
    if delivery_api() is None:
        print("delivery: not measured (not available)")
        return
    try:
        times = asyncio.run(measure_delivery(dsn, schema, count))
    except Exception as exc:  # an API still moving: say so rather than print numbers
        print(f"delivery: not measured (the API failed: {type(exc).__name__}: {exc})")
        return
    print(f"cross-host delivery ({count} messages, one in flight; ms from send_remote's start)")
    print(f"  {'until':<44} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7}")
    labels = {
        "sent": "send_remote returns (queued, NOTIFY committed)",
        "woken": "receiving host woken on its event loop",
        "delivered": "acceptance appended on the receiving host",
    }
    for key, label in labels.items():
        values = times[key]
        print(
            f"  {label:<44} {percentile(values, 0.5) * 1e3:>7.2f} "
            f"{percentile(values, 0.99) * 1e3:>7.2f} {max(values) * 1e3:>7.2f}"
        )


# -- main ---------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", default=os.environ.get(DSN_ENV), help=f"default: ${DSN_ENV}")
    parser.add_argument("--dir", type=Path, default=None, help="scratch directory for JSONL")
    parser.add_argument("--sessions", type=int, default=10, help="sessions per append round")
    parser.add_argument("--appends", type=int, default=300, help="appends per session")
    parser.add_argument("--repeat", type=int, default=3, help="append rounds per backend")
    parser.add_argument("--components", type=int, default=1500, help="calls per component")
    parser.add_argument("--children", type=int, default=1000)
    parser.add_argument("--child-events", type=int, default=100, help="events per child log")
    parser.add_argument("--unrelated", type=int, default=1000, help="other stored sessions")
    parser.add_argument("--runs", type=int, default=5, help="repeats of each warm measurement")
    parser.add_argument("--cold-runs", type=int, default=3, help="repeats of read-once and cold")
    parser.add_argument("--ttl", type=float, nargs="+", default=[1.0, 3.0], help="lease ttls")
    parser.add_argument("--trials", type=int, default=2, help="takeovers per ttl")
    parser.add_argument("--poll", type=float, default=0.02, help="takeover poll interval (s)")
    parser.add_argument("--notifies", type=int, default=500)
    parser.add_argument(
        "--big",
        action="store_true",
        help="larger run (minutes): 30 x 1000 appends, 1,000-event children, 10,000 others",
    )
    parser.add_argument(
        "--only",
        choices=("appends", "listing", "takeover", "delivery"),
        nargs="+",
        default=None,
    )
    args = parser.parse_args()
    if not args.dsn:
        sys.exit(f"postgres.py: no DSN (--dsn or ${DSN_ENV}; see .ci/postgres.sh)")
    if args.big:
        args.sessions, args.appends, args.repeat = 30, 1000, 3
        args.child_events, args.unrelated, args.trials = 1000, 10_000, 3
    only = set(args.only or ("appends", "listing", "takeover", "delivery"))
    schema = f"bench_{uuid.uuid4().hex[:12]}"
    scratch = Path(tempfile.mkdtemp(prefix="bench-postgres-", dir=args.dir))
    with psycopg.connect(args.dsn, autocommit=True) as conn:
        server = conn.execute("SHOW server_version").fetchone()
        fsync = conn.execute("SHOW fsync").fetchone()
        sync_commit = conn.execute("SHOW synchronous_commit").fetchone()
    print(
        f"machine: {platform.machine()} {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, JSON backend {BACKEND}; PostgreSQL "
        f"{server[0] if server else '?'} (fsync={fsync[0] if fsync else '?'}, "
        f"synchronous_commit={sync_commit[0] if sync_commit else '?'}), schema {schema}; "
        f"JSONL scratch {scratch}"
    )
    started = time.perf_counter()
    backends = Backends(args.dsn, schema, scratch)
    try:
        if "appends" in only:
            bench_appends(backends, args.sessions, args.appends, args.repeat)
            bench_components(args.dsn, schema, backends.pg, args.components)
        if "listing" in only:
            asyncio.run(bench_listing(backends, args))
        if "takeover" in only:
            bench_takeover(args.dsn, schema, args.ttl, args.trials, args.poll)
        if "delivery" in only:
            bench_delivery(args.dsn, schema, args.notifies)
    finally:
        backends.pg.close()
        drop_schema(args.dsn, schema)
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"total {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
