"""Appends through each backend, and where a PostgreSQL append's time goes."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

import psycopg
from agent_host_postgres import leases
from agent_host_postgres.persistence import PostgresPersistence
from agent_host_postgres.writer import encode_bodies

from host.sessions.model import Event, SessionHeader, TurnEnd
from host.sessions.persistence import SessionPersistence

from .support import NAMES, TURN, Backends, percentile, timed_calls, turn_body


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
    pool = pg._pool  # the pool appends use (its checkout sends no query to a healthy connection)
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
            seq = next(held_seqs)
            assert leases.fenced_insert(direct, held.plan([Event(seq, event.body)], seq))

        rows: dict[str, Callable[[], object]] = {
            "encode one event (codec)": lambda: encode_bodies([event]),
            "empty query (a bare round trip)": direct_empty,
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
