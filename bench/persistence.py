"""Benchmark of the JSONL session persistence (a script, not a test; runs in well under 60 s).

(a) Appends: events/s through ``JsonlWriter.append`` (one event per append, as ``Session.append``
    does) under the default policy ``fsync="turn"``, with ``commit(durable=True)`` every 10
    events as a turn end would; baseline: the same bytes written with one raw ``os.write`` per
    line and one ``fdatasync`` per 10 lines, in the same run. Target ratio >= 0.5.
(b) Cold load: a 100k-event session read into typed ``Event``s by ``inspect`` versus a bare
    ``json.loads`` of each line of the same file. Target ratio >= 1.0.
(c) Listing: ``list()`` of 11,001 stored sessions through a fresh ``JsonlPersistence`` (every
    header read) and again through the same one (header cache warm), against one bare
    ``os.scandir`` of the directory.
(d) Resume of a 100-event session (``SessionStore.resume``) against a read-only ``inspect`` of
    it, as the first call in a fresh host and steady (``bench/resume.py``). Target <= 1.3.

Each timing is the best of several repetitions (the machine is shared). Usage:
``python bench/persistence.py [--dir DIR] [--events N] [--only a b c d]``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import resume
from host.sessions.codec import BACKEND, encode_event
from host.sessions.jsonl import JsonlPersistence
from host.sessions.model import (
    Event,
    EventBody,
    InboxAccepted,
    MessageEvent,
    PluginEvent,
    SessionHeader,
    ToolCall,
    TurnEnd,
    TurnStart,
    new_id,
)

TURN = 10


def body(i: int) -> EventBody:
    """A realistic mix: turns of 10 events with messages, tool calls and inbox events."""
    r = i % TURN
    if r == 0:
        return TurnStart(turn_id=f"t{i // TURN}")
    if r == TURN - 1:
        return TurnEnd(turn_id=f"t{i // TURN}", stop_reason="completed")
    if r == 1:
        return InboxAccepted(message_id=new_id("m"), delivery="followup", content="do it " * 10)
    if r in (2, 3):
        call = ToolCall(new_id("c"), "read_file", {"path": "/src/module.py"})
        return MessageEvent(role="assistant", content="Let me look. " * 20, tool_calls=(call,))
    if r == 4:
        return PluginEvent(plugin="p", type="p/x", data={"a": [1, 2, 3]})
    return MessageEvent(role="tool", content="a line of the file\n" * 15, tool_call_id="c1")


def best_pair(
    ours: Callable[[], object], baseline: Callable[[], object], repeat: int
) -> tuple[float, float]:
    """Best time of each, runs interleaved so both see the same machine load."""
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for fn, out in ((ours, times[0]), (baseline, times[1])):
            gc.collect()
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    return min(times[0]), min(times[1])


def bench_append(root: Path, events: list[Event], repeat: int) -> tuple[float, float]:
    lines = [encode_event(e) for e in events]
    counter = iter(range(1_000_000))

    def ours() -> None:
        persistence = JsonlPersistence(root / f"ours{next(counter)}", fsync="turn")
        writer = persistence.open_writer(SessionHeader(id="bench"), create=True)
        for event in events:
            writer.append((event,))
            if event.seq % TURN == TURN - 1:
                writer.commit(durable=True)
        writer.close()

    def raw() -> None:
        fd = os.open(root / f"raw{next(counter)}", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        for index, line in enumerate(lines):
            os.write(fd, line)
            if index % TURN == TURN - 1:
                os.fdatasync(fd)
        os.close(fd)

    t_ours, t_raw = best_pair(ours, raw, repeat)
    return len(events) / t_ours, len(events) / t_raw


def bench_load(root: Path, count: int, repeat: int) -> tuple[float, float, int]:
    persistence = JsonlPersistence(root / "load", fsync="never")
    events = [Event(i, body(i)) for i in range(count)]
    writer = persistence.open_writer(SessionHeader(id="big"), create=True, events=events)
    writer.close()
    del events
    path = persistence.path_for("big")

    def ours() -> None:
        stored = asyncio.run(persistence.inspect("big"))
        assert len(stored.events) == count

    def bare() -> None:
        with path.open("rb") as file:
            [json.loads(line) for line in file]

    t_ours, t_bare = best_pair(ours, bare, repeat)
    return count / t_ours, (count + 1) / t_bare, path.stat().st_size


def bench_list(root: Path, count: int, repeat: int) -> tuple[float, float, float]:
    data_dir = root / "list"
    persistence = JsonlPersistence(data_dir, fsync="never")
    for i in range(count):
        persistence.open_writer(SessionHeader(id=f"s{i}"), create=True).close()

    def cold() -> None:
        assert len(asyncio.run(JsonlPersistence(data_dir).list())) == count

    asyncio.run(persistence.list())  # fills its cache

    def warm() -> None:
        assert len(asyncio.run(persistence.list())) == count

    def scan() -> None:
        with os.scandir(data_dir) as entries:
            assert len(list(entries)) == count

    t_cold, t_scan = best_pair(cold, scan, repeat)
    t_warm, t_scan2 = best_pair(warm, scan, repeat)
    return t_cold, t_warm, min(t_scan, t_scan2)


def bench_resume(root: Path, samples: int, rounds: int) -> None:
    data_dir = root / "resume"
    persistence = JsonlPersistence(data_dir)
    events = [Event(i, body(i)) for i in range(100)]
    persistence.open_writer(SessionHeader(id="hundred"), create=True, events=events).close()
    size = persistence.path_for("hundred").stat().st_size
    print(f"(d) resume against inspect, {size / 1e3:.1f} kB log:")
    setup = (
        "from host.sessions.jsonl import JsonlPersistence\n"
        f"def make():\n    return JsonlPersistence({str(data_dir)!r})\n"
    )
    resume.measure("JSONL", setup, persistence, "hundred", 100, samples, rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=None, help="scratch directory (a real disk)")
    parser.add_argument("--events", type=int, default=5000, help="events for the append test")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sessions", type=int, default=11_001, help="sessions for the list test")
    parser.add_argument("--samples", type=int, default=15, help="fresh processes for (d)")
    parser.add_argument("--only", choices=("a", "b", "c", "d"), nargs="+", default=None)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-persistence-", dir=args.dir))
    try:
        print(
            f"machine: {platform.machine()} {os.cpu_count()} cores, Python "
            f"{platform.python_version()}, JSON backend {BACKEND}, scratch {root}"
        )
        only = set(args.only or "abcd")
        if "a" in only:
            appended = [Event(i, body(i)) for i in range(args.events)]
            ours, raw = bench_append(root, appended, args.repeat)
            print(
                f"(a) append, fsync=turn (commit every {TURN}): {ours:,.0f} events/s; raw "
                f"os.write + fdatasync per {TURN}: {raw:,.0f} events/s; ratio {ours / raw:.2f} "
                "(target >= 0.5)"
            )
        if "b" in only:
            ours, bare, size = bench_load(root, 100_000, args.repeat)
            print(
                f"(b) cold load of 100k events ({size / 1e6:.1f} MB) into typed events: "
                f"{ours:,.0f} events/s; bare json.loads per line: {bare:,.0f} lines/s; ratio "
                f"{ours / bare:.2f} (target >= 1.0)"
            )
        if "c" in only:
            cold, warm, scan = bench_list(root, args.sessions, args.repeat)
            print(
                f"(c) list() of {args.sessions:,} sessions: fresh persistence {cold * 1e3:.1f} "
                f"ms; second list (header cache) {warm * 1e3:.1f} ms; one os.scandir "
                f"{scan * 1e3:.1f} ms; fresh / cached {cold / warm:.0f}x, cached / scandir "
                f"{warm / scan:.1f}x"
            )
        if "d" in only:
            bench_resume(root, args.samples, args.repeat * 40)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
