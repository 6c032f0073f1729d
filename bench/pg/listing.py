"""``list_children`` over a large corpus, on JSONL and on PostgreSQL."""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any, Literal

from bench.listing import read_once, timed
from host.sessions.jsonl import JsonlPersistence
from host.sessions.model import (
    Event,
    MessageEvent,
    SessionHeader,
    SubagentDescriptorEvent,
    TurnEnd,
    TurnStart,
)
from host.sessions.persistence import SessionPersistence
from host.sessions.projections import Projections
from host.sessions.store import SessionStore
from host.subagents.identity import IDENTITY_UNIT
from host.subagents.index import IdentityIndex
from host.subagents.listing import SubagentListing

from .support import Backends

PARENT = "parent"


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
    inbox = getattr(persistence, "inbox", persistence)  # older trees: the store itself
    residency = getattr(inbox, "residency", None)
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
