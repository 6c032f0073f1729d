"""Resume against inspect: what ``bench/persistence.py`` and ``bench/pg/resume.py`` measure.

A resume (``SessionStore.resume``: read, repair, lock, writer, live session) is timed against
a read-only ``inspect`` of the same stored session, two ways:

* **first in a fresh host**: each sample is a new process that builds the persistence (as
  plugin activation does), lets the host settle for 50 ms, then times its very first call,
  a resume or an inspect (alternating processes, medians), and the same call again;
* **steady**: in one process, resumes (released outside the clock) and inspects interleaved.

Only the store's public API is used, so the same code measures any revision of the host.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import time
from pathlib import Path

from host.sessions.persistence import SessionPersistence
from host.sessions.store import SessionStore

ROOT = Path(__file__).resolve().parent.parent

FIRST_CALL = """
import asyncio, sys, time
{setup}
from host.sessions.store import SessionStore


async def main(kind: str, session_id: str) -> None:
    persistence = make()  # plugin activation
    await asyncio.sleep(0.05)  # the host is up; a request arrives
    store = SessionStore(persistence, None)
    times = []
    for _ in range(2):
        start = time.perf_counter()
        if kind == "resume":
            await store.resume(session_id)
        else:
            await persistence.inspect(session_id)
        times.append(time.perf_counter() - start)
        store.release(session_id)
    getattr(persistence, "close", lambda: None)()
    print(*times)


asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def first_calls(setup: str, session_id: str, samples: int) -> dict[str, float]:
    """Median seconds of the first resume and the first inspect in fresh processes, and of
    the second resume in each; ``setup`` is Python source defining ``make()``, which builds
    the persistence."""
    code = FIRST_CALL.format(setup=setup)
    times: dict[str, list[float]] = {"resume": [], "inspect": [], "second resume": []}
    for _ in range(samples):
        for kind in ("resume", "inspect"):
            done = subprocess.run(
                [sys.executable, "-c", code, kind, session_id],
                capture_output=True,
                text=True,
                check=True,
                cwd=ROOT,
            )
            first, second = (float(t) for t in done.stdout.split()[-2:])
            times[kind].append(first)
            if kind == "resume":
                times["second resume"].append(second)
    return {kind: statistics.median(out) for kind, out in times.items()}


async def steady_calls(
    persistence: SessionPersistence, session_id: str, rounds: int
) -> dict[str, float]:
    """Median seconds of a resume and of an inspect, interleaved in one running host."""
    store = SessionStore(persistence, None)
    clock = time.perf_counter
    times: dict[str, list[float]] = {"resume": [], "inspect": []}
    for _ in range(rounds):
        start = clock()
        await store.resume(session_id)
        times["resume"].append(clock() - start)
        store.release(session_id)
        start = clock()
        await persistence.inspect(session_id)
        times["inspect"].append(clock() - start)
    return {kind: statistics.median(out) for kind, out in times.items()}


def report(name: str, first: dict[str, float], steady: dict[str, float], events: int) -> None:
    """Print both measurements with the resume ÷ inspect ratio (target <= 1.3)."""
    for label, row in (("first call in a fresh host", first), ("steady", steady)):
        print(
            f"  {name}, {events} events, {label}: resume {row['resume'] * 1e3:.2f} ms, "
            f"inspect {row['inspect'] * 1e3:.2f} ms, ratio {row['resume'] / row['inspect']:.2f} "
            "(target <= 1.3)"
        )
    print(
        f"  {name}, first resume in a fresh host {first['resume'] * 1e3:.2f} ms, its second "
        f"{first['second resume'] * 1e3:.2f} ms"
    )


def measure(
    name: str,
    setup: str,
    persistence: SessionPersistence,
    session_id: str,
    events: int,
    samples: int,
    rounds: int,
) -> None:
    """Both measurements of one stored session, printed (``persistence`` for the steady one)."""
    first = first_calls(setup, session_id, samples)
    steady = asyncio.run(steady_calls(persistence, session_id, rounds))
    report(name, first, steady, events)
