"""Listing benchmark: ``list_children`` cold/warm against a naive reader, and ``list_descendants``.

Not a test. Run from the project root with the project venv::

    .venv/bin/python bench/listing.py [--small]

Corpus (full run; ``--small`` divides every count by 10): one data directory holding 10,000
unrelated sessions plus one parent with 1,000 settled continuable children whose logs hold
1,000 events each (a descriptor, then messages). Written with the real codec, fsync off; every
file is in the page cache, so reads measure parsing, not the disk.

Measured in the same run:

* ``naive``: a no-index baseline — ``persistence.list()`` once, then every candidate's
  log read in full with ``inspect``, and read a second time when it has exactly one descriptor
  (the "exact read"); 8 reads at a time, like listing;
* ``read-once``: ``list()`` plus one ``inspect`` per child — the floor a cold listing must meet;
* ``cold``: the first ``list_children`` with an empty identity index (reads each child once and
  writes the index back); read-once and cold are measured in turns, ``--cold-runs`` times each;
* ``warm``: the next ``list_children`` (index trusted, no log read), and the same as a new
  process (every CLI invocation) sees it: a fresh persistence, store and ``IdentityIndex`` over
  the same directory (the header cache file and the index file read, no log opened); the same
  timed inside a real new process, after its imports and set-up; and a new process right after
  another session was created (the directory changed: every file is stat'ed, the new one read);
* ``warm vs log length``: warm listings over 100 children with 100-event logs and 100 children
  with 10,000-event logs (indexes filled with ``record``, as the service does);
* ``descendants``: ``list_descendants`` over a 10,000-node random tree (10% ordinary forks,
  20% one-shot, 70% continuable), cold and warm.

Times are the median of repeated runs (``time.perf_counter``), the naive reader's a single run;
ratios are printed.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any, Literal

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from host.sessions.codec import encode_events, encode_header  # noqa: E402
from host.sessions.jsonl import JsonlPersistence  # noqa: E402
from host.sessions.model import (  # noqa: E402
    Event,
    MessageEvent,
    SessionHeader,
    SubagentDescriptorEvent,
)
from host.sessions.persistence import SessionPersistence  # noqa: E402
from host.sessions.projections import Projections  # noqa: E402
from host.sessions.store import SessionStore  # noqa: E402
from host.subagents.descriptors import parse_descriptor  # noqa: E402
from host.subagents.identity import IDENTITY_UNIT  # noqa: E402
from host.subagents.index import IdentityIndex  # noqa: E402
from host.subagents.listing import SubagentListing  # noqa: E402

PARENT = "parent"


def descriptor(label: str, mode: str = "continuable") -> dict[str, Any]:
    data: dict[str, Any] = {"version": 2, "mode": mode, "provider": "spawn"}
    if mode == "continuable":
        data["label"] = label
    return data


def log_body(n_events: int, desc: dict[str, Any] | None) -> bytes:
    """The event lines of a log: the descriptor (if any), then messages, ``n_events`` in all."""
    events = []
    if desc is not None:
        events.append(Event(0, SubagentDescriptorEvent(desc)))
    while len(events) < n_events:
        seq = len(events)
        role: Literal["user", "assistant"] = "user" if seq % 2 else "assistant"
        text = f"message {seq}: " + "lorem ipsum dolor sit amet " * 4
        events.append(Event(seq, MessageEvent(role=role, content=text, message_id=f"m{seq}")))
    return encode_events(events)


def write(data_dir: Path, header: SessionHeader, body: bytes) -> None:
    (data_dir / f"{header.id}.jsonl").write_bytes(encode_header(header) + body)


def build_corpus(data_dir: Path, unrelated: int, children: int, n_events: int) -> list[str]:
    data_dir.mkdir(parents=True, exist_ok=True)
    small = log_body(2, None)
    for i in range(unrelated):
        write(data_dir, SessionHeader(id=f"u{i:05}", created_at=i + 1), small)
    write(data_dir, SessionHeader(id=PARENT, created_at=1), small)
    body = log_body(n_events, descriptor("worker"))
    ids = []
    for i in range(children):
        header = SessionHeader(
            id=f"c{i:05}", parent_session=PARENT, created_at=10 + i, origin="subagent"
        )
        write(data_dir, header, body)
        ids.append(header.id)
    return ids


def listing_over(data_dir: Path, index: IdentityIndex | None) -> SubagentListing:
    persistence = JsonlPersistence(data_dir, fsync="never")
    projections = Projections()
    projections.register(IDENTITY_UNIT)
    store = SessionStore(persistence, projections)
    return SubagentListing(
        sessions=store, projections=projections, persistence=persistence, index=index
    )


async def naive(persistence: JsonlPersistence, parent: str) -> int:
    """The no-index reference reader (module docstring); returns the children it found."""
    headers = await persistence.list()
    candidates = [h for h in headers if h.parent_session == parent and h.origin == "subagent"]
    gate = asyncio.Semaphore(8)

    async def one(header: SessionHeader) -> bool:
        async with gate:
            stored = await persistence.inspect(header.id)
        found = [e for e in stored.events if e.kind == "subagent/descriptor"]
        if len(found) != 1:
            return False
        async with gate:
            again = await persistence.inspect(header.id)
        event = again.events[found[0].seq]
        return not hasattr(parse_descriptor(event.body.descriptor), "reason")  # type: ignore[union-attr]

    return sum(await asyncio.gather(*(one(h) for h in candidates)))


async def read_once(persistence: SessionPersistence, ids: list[str]) -> None:
    await persistence.list()
    gate = asyncio.Semaphore(8)

    async def one(sid: str) -> None:
        async with gate:
            await persistence.inspect(sid)

    await asyncio.gather(*(one(s) for s in ids))


async def timed(make: Callable[[], Awaitable[Any]], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        await make()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def show(name: str, seconds: float, note: str = "") -> None:
    print(f"  {name:<34} {seconds * 1000:10.1f} ms  {note}")


async def bench_children(tmp: Path, scale: int, runs: int, cold_runs: int) -> None:
    unrelated, children, n_events = 10_000 // scale, 1_000 // scale, 1_000
    data_dir = tmp / "main"
    start = time.perf_counter()
    ids = build_corpus(data_dir, unrelated, children, n_events)
    print(
        f"list_children: {unrelated} unrelated + {children} children x {n_events} events "
        f"(built in {time.perf_counter() - start:.1f} s)"
    )
    persistence = JsonlPersistence(data_dir, fsync="never")
    assert await naive(persistence, PARENT) == children
    t_naive = await timed(lambda: naive(persistence, PARENT), 1)
    index_path = data_dir / ".index" / "identity.jsonl"
    t_once, t_cold, listing = await cold_and_read_once(persistence, index_path, ids, cold_runs)
    t_warm = await timed(lambda: listing.list_children(PARENT), runs)
    t_fresh = await timed(
        lambda: listing_over(data_dir, IdentityIndex(index_path)).list_children(PARENT), runs
    )
    t_process = in_new_processes(data_dir, index_path, children, runs)
    t_list = await timed(lambda: persistence.list(), runs)
    t_changed = await fresh_after_a_creation(data_dir, index_path, unrelated, runs)
    show("naive (list + 2 reads per child)", t_naive)
    show("read-once (list + 1 read per child)", t_once)
    show("cold list_children", t_cold, f"cold/read-once = {t_cold / t_once:.2f}")
    show("warm list_children", t_warm, f"naive/warm = {t_naive / t_warm:.0f}x")
    show("warm, as a new process", t_fresh, f"naive/warm = {t_naive / t_fresh:.0f}x")
    show("  ... in a real new process", t_process, f"naive/warm = {t_naive / t_process:.0f}x")
    show("  ... just after a creation", t_changed, f"naive/warm = {t_naive / t_changed:.0f}x")
    show("persistence.list() alone", t_list, f"= {t_list / t_warm:.0%} of warm")


async def cold_and_read_once(
    persistence: JsonlPersistence, index_path: Path, ids: list[str], cold_runs: int
) -> tuple[float, float, SubagentListing]:
    """Median read-once and cold times, measured in turns (each cold listing starts from no
    identity index), and the listing of the last cold run, now warm."""
    once, cold = [], []
    for _ in range(cold_runs):
        once.append(await timed(lambda: read_once(persistence, ids), 1))
        index_path.unlink(missing_ok=True)
        listing = listing_over(persistence.data_dir, IdentityIndex(index_path))
        start = time.perf_counter()
        entries = await listing.list_children(PARENT)
        cold.append(time.perf_counter() - start)
        assert len(entries) == len(ids)
    return statistics.median(once), statistics.median(cold), listing


NEW_PROCESS = """
import asyncio, sys, time
from pathlib import Path
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/bench"]
from listing import PARENT, IdentityIndex, listing_over

async def main() -> None:
    listing = listing_over(Path(sys.argv[2]), IdentityIndex(Path(sys.argv[3])))
    start = time.perf_counter()
    entries = await listing.list_children(PARENT)
    print(time.perf_counter() - start, len(entries))

asyncio.run(main())
"""


def in_new_processes(data_dir: Path, index_path: Path, children: int, runs: int) -> float:
    """Median warm listing timed inside a real new process (after its imports and set-up)."""
    times = []
    for _ in range(runs):
        args = [sys.executable, "-c", NEW_PROCESS, str(ROOT), str(data_dir), str(index_path)]
        done = subprocess.run(args, capture_output=True, text=True, check=True)
        seconds, count = done.stdout.split()
        assert int(count) == children, done.stdout
        times.append(float(seconds))
    return statistics.median(times)


async def fresh_after_a_creation(
    data_dir: Path, index_path: Path, unrelated: int, runs: int
) -> float:
    """Median warm listing as a new process, each run just after one more session was stored."""
    small = log_body(2, None)
    times = []
    for run in range(runs):
        write(data_dir, SessionHeader(id=f"x{run:05}", created_at=unrelated + 1 + run), small)
        start = time.perf_counter()
        await listing_over(data_dir, IdentityIndex(index_path)).list_children(PARENT)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


async def bench_log_length(tmp: Path, scale: int, runs: int) -> None:
    children = max(100 // scale, 10)
    print(f"warm list_children vs log length ({children} children, no unrelated sessions)")
    results = {}
    for n_events in (100, 10_000):
        data_dir = tmp / f"len{n_events}"
        ids = build_corpus(data_dir, 0, children, n_events)
        index = IdentityIndex(data_dir / ".index" / "identity.jsonl")
        for sid in ids:
            header = SessionHeader(
                id=sid, parent_session=PARENT, created_at=10 + int(sid[1:]), origin="subagent"
            )
            index.record(header, descriptor("worker"), 0)
        listing = listing_over(data_dir, index)
        entries = await listing.list_children(PARENT)
        assert len(entries) == children
        results[n_events] = await timed(partial(listing.list_children, PARENT), runs)
        show(f"warm, {n_events}-event logs", results[n_events])
    print(f"  ratio 10,000 / 100 events: {results[10_000] / results[100]:.2f}")


def build_tree(data_dir: Path, nodes: int) -> None:
    rng = random.Random(7)
    data_dir.mkdir(parents=True, exist_ok=True)
    small = log_body(2, None)
    write(data_dir, SessionHeader(id="n0", created_at=0), small)
    bodies = {
        "continuable": log_body(3, descriptor("w")),
        "one-shot": log_body(3, descriptor("w", "one-shot")),
    }
    for i in range(1, nodes):
        parent = rng.randrange(max(0, i - 50), i)  # bushy and deep
        kind = rng.choices(["ordinary", "one-shot", "continuable"], [10, 20, 70])[0]
        header = SessionHeader(
            id=f"n{i}",
            parent_session=f"n{parent}",
            created_at=i,
            origin=None if kind == "ordinary" else "subagent",
        )
        write(data_dir, header, small if kind == "ordinary" else bodies[kind])


async def bench_descendants(tmp: Path, scale: int, runs: int) -> None:
    nodes = 10_000 // scale
    data_dir = tmp / "tree"
    build_tree(data_dir, nodes)
    index = IdentityIndex(data_dir / ".index" / "identity.jsonl")
    listing = listing_over(data_dir, index)
    print(f"list_descendants over a {nodes}-node tree")
    start = time.perf_counter()
    entries = await listing.list_descendants("n0")
    t_cold = time.perf_counter() - start
    t_warm = await timed(lambda: listing.list_descendants("n0"), runs)
    depth = max(e.depth or 0 for e in entries)
    show("cold list_descendants", t_cold, f"{len(entries)} entries, max depth {depth}")
    show("warm list_descendants", t_warm, f"cold/warm = {t_cold / t_warm:.0f}x")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="a quick run: every count / 10")
    parser.add_argument("--runs", type=int, default=5, help="repeats of each warm measurement")
    parser.add_argument("--cold-runs", type=int, default=3, help="repeats of read-once and cold")
    args = parser.parse_args()
    scale = 10 if args.small else 1
    with tempfile.TemporaryDirectory(prefix="listing-bench-") as tmp:
        await bench_children(Path(tmp), scale, args.runs, args.cold_runs)
        await bench_log_length(Path(tmp), scale, args.runs)
        await bench_descendants(Path(tmp), scale, args.runs)


if __name__ == "__main__":
    asyncio.run(main())
