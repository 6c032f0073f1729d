"""Ten agents of one host appending at once: total throughput against one agent's, and the
event loop's longest stall while they do — on loopback and with the database one hop away
(``delay_proxy``). Each agent is a task awaiting its appends (``Session.append_async``), as
the driver does; the baseline in the same run is the same work through synchronous appends
(``Session.append``, what every append was before group commit: the loop waits for each).
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


async def longest_stall(stop: asyncio.Event) -> float:
    """How much later than asked the loop ran a ``TICK``-second sleep, at worst."""
    loop = asyncio.get_running_loop()
    worst = 0.0
    while not stop.is_set():
        asked = loop.time()
        await asyncio.sleep(TICK)
        worst = max(worst, loop.time() - asked - TICK)
    return worst


async def run_agents(
    persistence: PostgresPersistence, tag: str, agents: int, appends: int, *, awaited: bool
) -> tuple[float, float]:
    """``agents`` sessions appending ``appends`` one-event appends each, at once: the seconds
    it took and the loop's longest stall meanwhile."""
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
    watcher = asyncio.ensure_future(longest_stall(stop))
    await asyncio.sleep(0)
    start = time.perf_counter()
    await asyncio.gather(*(agent(session) for session in sessions))
    elapsed = time.perf_counter() - start
    stop.set()
    stall = await watcher
    for session in sessions:
        store.release(session.id)
    return elapsed, stall


async def idle_stall(seconds: float) -> float:
    """The watcher's reading on an idle loop: the floor of ``longest_stall``."""
    stop = asyncio.Event()
    watcher = asyncio.ensure_future(longest_stall(stop))
    await asyncio.sleep(seconds)
    stop.set()
    return await watcher


def bench_concurrency(
    dsn: str, schema: str, agents: int, appends: int, delay_ms: float, repeat: int
) -> None:
    print(
        f"concurrent appends: {agents} agents x {appends} one-event appends at once vs one "
        f"agent; best rate of {repeat} rounds, longest event-loop stall (a {TICK * 1000:g} ms "
        "sleep's lateness) of all rounds"
    )
    print(
        f"  {'database link':<22} {'mode':<22} {'appends/s':>10} {'vs 1 agent':>10} {'stall ms':>9}"
    )
    for name, link in (
        ("loopback", contextlib.nullcontext(dsn)),
        (f"+{delay_ms:g} ms round trip", delayed(dsn, delay_ms)),
    ):
        with link as via:
            persistence = PostgresPersistence(via, schema=schema)
            try:
                asyncio.run(measure_link(persistence, name, agents, appends, repeat))
            finally:
                persistence.close()


async def measure_link(
    persistence: PostgresPersistence, link: str, agents: int, appends: int, repeat: int
) -> None:
    prefix = uuid.uuid4().hex[:8]
    await run_agents(persistence, f"w{prefix}", 2, 20, awaited=True)
    rows: dict[str, tuple[float, float]] = {}
    for r in range(repeat):
        for mode, count, awaited in (
            ("1 agent, awaited", 1, True),
            (f"{agents} agents, awaited", agents, True),
            (f"{agents} agents, synchronous", agents, False),
        ):
            tag = f"{prefix}-{count}-{int(awaited)}-{r}"
            elapsed, stall = await run_agents(persistence, tag, count, appends, awaited=awaited)
            rate = count * appends / elapsed
            best_rate, worst_stall = rows.get(mode, (0.0, 0.0))
            rows[mode] = (max(best_rate, rate), max(worst_stall, stall))
    one = rows["1 agent, awaited"][0]
    for mode, (rate, stall) in rows.items():
        print(f"  {link:<22} {mode:<22} {rate:>10,.0f} {rate / one:>9.2f}x {stall * 1000:>9.2f}")
    floor = await idle_stall(1.0)
    print(f"  {link:<22} {'idle loop (floor)':<22} {'':>10} {'':>10} {floor * 1000:>9.2f}")
