"""What the PostgreSQL benchmark's measurements share: timing, events, the backends compared."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

import psycopg
from agent_host_postgres.persistence import PostgresPersistence

from host.sessions.jsonl import JsonlPersistence
from host.sessions.model import EventBody, MessageEvent, TurnEnd, TurnStart
from host.sessions.persistence import SessionPersistence

ROOT = Path(__file__).resolve().parent.parent.parent
TURN = 10


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


def drop_schema(dsn: str, schema: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


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
