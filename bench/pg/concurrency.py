"""Ten agents of one host appending at once: total throughput against one agent's, and the
event loop's longest stall while they do — on loopback and with the database one hop away
(``delay_proxy``). Each agent is a task awaiting its appends (``Session.append_async``), as
the driver does, with one append lane (one commit in flight at a time) and with two; the
baseline in the same run is the same work through synchronous appends (``Session.append``,
what every append was before group commit: the loop waits for each).
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from agent_host_postgres.persistence import PostgresPersistence

from host.sessions.model import SessionHeader
from host.sessions.session import Session
from host.sessions.store import SessionStore

from .support import turn_body

TICK = 0.0005


@contextmanager
def delayed(dsn: str, delay_ms: float) -> Iterator[str]:
    """``dsn`` through a ``delay_proxy`` process adding ``delay_ms`` to each round trip."""
    parts = urlsplit(dsn)
    proxy = subprocess.Popen(
        [
            sys.executable,
            str(Path(__file__).with_name("delay_proxy.py")),
            parts.hostname or "127.0.0.1",
            str(parts.port or 5432),
            str(delay_ms),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proxy.stdout is not None
        port = int(proxy.stdout.readline())
        user = f"{parts.username}@" if parts.username else ""
        yield urlunsplit(parts._replace(netloc=f"{user}127.0.0.1:{port}"))
    finally:
        proxy.kill()
        proxy.wait()


async def lateness(stop: asyncio.Event) -> list[float]:
    """How much later than asked the loop ran each ``TICK``-second sleep until ``stop``."""
    loop = asyncio.get_running_loop()
    late: list[float] = []
    while not stop.is_set():
        asked = loop.time()
        await asyncio.sleep(TICK)
        late.append(loop.time() - asked - TICK)
    return late


async def run_agents(
    persistence: PostgresPersistence, tag: str, agents: int, appends: int, *, awaited: bool
) -> tuple[float, list[float]]:
    """``agents`` sessions appending ``appends`` one-event appends each, at once: the seconds
    it took and the loop's lateness meanwhile."""
    store = SessionStore(persistence, None)
    sessions = [store.new(SessionHeader(id=f"{tag}-{a}", created_at=a + 1)) for a in range(agents)]
    for session in sessions:
        store.publish(session)

    async def agent(session: Session) -> None:
        for n in range(appends):
            if awaited:
                await session.append_async(turn_body(n))
            else:
                session.append(turn_body(n))
                await asyncio.sleep(0)  # the next agent's turn, as an agent's await would give

    stop = asyncio.Event()
    watcher = asyncio.ensure_future(lateness(stop))
    await asyncio.sleep(0)
    start = time.perf_counter()
    await asyncio.gather(*(agent(session) for session in sessions))
    elapsed = time.perf_counter() - start
    stop.set()
    late = await watcher
    for session in sessions:
        store.release(session.id)
    return elapsed, late


async def idle_lateness(seconds: float) -> list[float]:
    """The watcher's reading on an idle loop: the floor of ``lateness``."""
    stop = asyncio.Event()
    watcher = asyncio.ensure_future(lateness(stop))
    await asyncio.sleep(seconds)
    stop.set()
    return await watcher


def stall_ms(late: list[float]) -> str:
    """``p99 / max`` of the lateness, in milliseconds."""
    ordered = sorted(late)
    return f"{ordered[int(len(ordered) * 0.99)] * 1000:.2f} / {ordered[-1] * 1000:.2f}"


def bench_concurrency(
    dsn: str, schema: str, agents: int, appends: int, delay_ms: float, repeat: int
) -> None:
    print(
        f"concurrent appends: {agents} agents x {appends} one-event appends at once vs one "
        f"agent; best rate of {repeat} rounds; event-loop stall = a {TICK * 1000:g} ms sleep's "
        "lateness, p99 / max over all rounds"
    )
    print(
        f"  {'database link':<22} {'mode':<26} {'appends/s':>10} {'vs 1 agent':>10} "
        f"{'stall ms p99 / max':>19}"
    )
    for name, link in (
        ("loopback", contextlib.nullcontext(dsn)),
        (f"+{delay_ms:g} ms round trip", delayed(dsn, delay_ms)),
    ):
        with link as via:
            lanes = {n: PostgresPersistence(via, schema=schema, append_lanes=n) for n in (1, 2)}
            try:
                asyncio.run(measure_link(lanes, name, agents, appends, repeat))
            finally:
                for persistence in lanes.values():
                    persistence.close()


async def measure_link(
    lanes: dict[int, PostgresPersistence], link: str, agents: int, appends: int, repeat: int
) -> None:
    """The rows of one database link, rounds interleaved (the same machine load for each)."""
    prefix = uuid.uuid4().hex[:8]
    modes = (
        ("1 agent, awaited", 1, True, 2),
        (f"{agents} agents, awaited, 1 lane", agents, True, 1),
        (f"{agents} agents, awaited, 2 lanes", agents, True, 2),
        (f"{agents} agents, synchronous", agents, False, 2),
    )
    for n, persistence in lanes.items():
        await run_agents(persistence, f"w{prefix}{n}", 2, 20, awaited=True)
    rows: dict[str, tuple[float, list[float]]] = {}
    for r in range(repeat):
        for mode, count, awaited, n in modes:
            tag = f"{prefix}-{count}-{int(awaited)}-{n}-{r}"
            elapsed, late = await run_agents(lanes[n], tag, count, appends, awaited=awaited)
            best_rate, pooled = rows.get(mode, (0.0, []))
            rows[mode] = (max(best_rate, count * appends / elapsed), pooled + late)
    one = rows[modes[0][0]][0]
    for mode, (rate, late) in rows.items():
        print(f"  {link:<22} {mode:<26} {rate:>10,.0f} {rate / one:>9.2f}x {stall_ms(late):>19}")
    floor = stall_ms(await idle_lateness(2.0))
    print(f"  {link:<22} {'idle loop (floor)':<26} {'':>10} {'':>10} {floor:>19}")
