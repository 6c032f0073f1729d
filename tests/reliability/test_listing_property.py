"""Listing property: random trees → ``list_descendants`` lists each subagent node once, in
pre-order, and never raises.

This extends ``tests/subagents/test_descendants.py::test_random_trees_…`` (ordinary, one-shot,
continuable, corrupt, missing-descriptor, newer-version and vanishing nodes) with fork-seeded
children (a copied descriptor is never the child's identity), several own descriptors, live
children (running, or in their creation window), torn tails, damage in the middle of a log
and files whose header is garbage (not sessions: they and their subtrees are unreachable),
listed with and without the identity index, cold or warm.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from host.sessions.model import Event, MessageEvent, SessionHeader, SubagentDescriptorEvent
from host.subagents.entries import ChildEntry, DiagnosticEntry
from tests.profile import scale
from tests.subagents.harness import World, continuable, one_shot

KINDS = [
    "ordinary",
    "one-shot",
    "continuable",
    "corrupt",
    "no-descriptor",
    "newer",
    "vanishes",
    "fork-own",
    "fork-none",
    "two-own",
    "garbage-file",
    "torn-tail",
    "damaged-middle",
    "live",
    "live-creating",
]
LISTED_AS: dict[str, tuple[str, str] | None] = {
    # kind -> ("child", mode/activity) | ("diagnostic", reason) | None (no entry)
    "ordinary": None,
    "one-shot": ("child", "one-shot"),
    "continuable": ("child", "continuable"),
    "corrupt": ("diagnostic", "corrupt"),
    "no-descriptor": ("diagnostic", "corrupt"),
    "newer": ("diagnostic", "unsupported"),
    "fork-own": ("child", "continuable"),
    "fork-none": ("diagnostic", "corrupt"),
    "two-own": ("diagnostic", "corrupt"),
    "torn-tail": ("child", "continuable"),
    "damaged-middle": ("child", "continuable"),
    "live": ("child", "continuable"),
    "live-creating": None,
}

trees = st.integers(min_value=1, max_value=12).flatmap(
    lambda n: st.tuples(
        st.tuples(*[st.integers(min_value=0, max_value=i) for i in range(n)]),
        st.lists(st.sampled_from(KINDS), min_size=n, max_size=n),
        st.lists(st.integers(min_value=0, max_value=3), min_size=n, max_size=n),
        st.booleans(),  # warm: list once before the checked listing
        st.booleans(),  # with the identity index
    )
)


def store(world: World, header: SessionHeader, bodies: list[Any]) -> None:
    events = [Event(seq, body) for seq, body in enumerate(bodies)]
    world.persistence.inner.open_writer(header, create=True, events=events).close()


def build(world: World, parents: tuple[int, ...], kinds: list[str], stamps: list[int]) -> list[str]:
    """Write node i+1 under ``parents[i]``; return the ids to bring live afterwards."""
    store(world, SessionHeader(id="n0"), [MessageEvent(role="user", content="root")])
    live: list[str] = []
    for i, (parent, kind) in enumerate(zip(parents, kinds, strict=True), start=1):
        sid = f"n{i}"
        seed: list[Any] = []
        own: list[Any] = []
        if kind in ("fork-own", "fork-none"):
            seed = [
                SubagentDescriptorEvent(continuable(f"n{parent}")),
                MessageEvent(role="user", content="s"),
            ]
        if kind in ("continuable", "fork-own", "torn-tail", "damaged-middle", "live", "vanishes"):
            own = [SubagentDescriptorEvent(continuable(sid))]
        elif kind == "one-shot":
            own = [SubagentDescriptorEvent(one_shot())]
        elif kind == "corrupt":
            own = [SubagentDescriptorEvent({"version": 2, "mode": "continuable"})]
        elif kind == "newer":
            own = [SubagentDescriptorEvent({"version": 5, "anything": [1]})]
        elif kind == "two-own":
            own = [
                SubagentDescriptorEvent(continuable(sid)),
                SubagentDescriptorEvent(continuable(sid)),
            ]
        header = SessionHeader(
            id=sid,
            parent_session=f"n{parent}",
            created_at=stamps[i - 1],
            origin=None if kind == "ordinary" else "subagent",
            seed_length=len(seed),
        )
        store(world, header, [*seed, *own, MessageEvent(role="assistant", content="done")])
        path = world.log_path(sid)
        if kind == "garbage-file":
            path.write_bytes(b"\x00not a header\n" + path.read_bytes())
        elif kind == "torn-tail":
            with path.open("ab") as f:
                f.write(b'{"seq":99,"kind":"mess')
        elif kind == "damaged-middle":
            lines = path.read_bytes().split(b"\n")
            lines.insert(len(lines) - 2, b"\x00garbage")  # before the last event line
            path.write_bytes(b"\n".join(lines))
        if kind in ("live", "live-creating"):
            live.append(sid)
    return live


def expected_pre_order(
    parents: tuple[int, ...], kinds: list[str], stamps: list[int]
) -> list[tuple[str, str, int]]:
    children: dict[int, list[int]] = {}
    for i, parent in enumerate(parents, start=1):
        if kinds[i - 1] != "garbage-file":  # not a session: neither listed nor walked
            children.setdefault(parent, []).append(i)
    out: list[tuple[str, str, int]] = []
    stack = [(0, 0)]
    while stack:  # iterative: trees may be deep
        node, depth = stack.pop()
        if node:
            out.append((f"n{node}", f"n{parents[node - 1]}", depth))
        kids = sorted(children.get(node, []), key=lambda c: (stamps[c - 1], f"n{c}"))
        stack.extend((kid, depth + 1) for kid in reversed(kids))
    return out


@pytest.mark.slow
@settings(
    max_examples=scale(60, 600),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(trees)
def test_random_trees_with_forks_live_and_damaged_files(tree: Any) -> None:
    parents, kinds, stamps, warm, with_index = tree
    kind_of = {f"n{i}": kind for i, kind in enumerate(kinds, start=1)}
    with tempfile.TemporaryDirectory() as tmp:
        world = World(Path(tmp))

        async def run() -> list[Any]:
            live = build(world, parents, kinds, stamps)
            for sid in live:
                session = await world.store.resume(sid)
                if kind_of[sid] == "live-creating":
                    assert session.header.origin == "subagent"
            # a live child in its creation window has no own descriptor yet
            listing = world.listing(index=with_index)
            vanishing = {sid for sid, kind in kind_of.items() if kind == "vanishes"}
            if warm:
                await listing.list_descendants("n0")
            world.persistence.on_inspect = lambda sid: (
                world.log_path(sid).unlink(missing_ok=True) if sid in vanishing else None
            )
            entries = await listing.list_descendants("n0")
            again = await world.listing(index=with_index).list_descendants("n0")
            for sid in live:
                world.store.release(sid)
            return [entries, again]

        entries, again = asyncio.run(run())
    expected = [
        row
        for row in expected_pre_order(parents, kinds, stamps)
        if LISTED_AS.get(kind_of[row[0]], ()) is not None
    ]
    assert [(e.id, e.parent_id, e.depth) for e in entries] == expected
    assert len({e.id for e in entries}) == len(entries)  # each node once
    for entry in entries:
        kind = kind_of[entry.id]
        if kind == "vanishes":  # unlinked at its first inspection
            assert isinstance(entry, ChildEntry) if warm and with_index else True
            continue
        shape = LISTED_AS[kind]
        assert shape is not None
        if shape[0] == "child":
            assert isinstance(entry, ChildEntry), (kind, entry)
            assert entry.mode == shape[1] and entry.label == (
                entry.id if shape[1] == "continuable" else None
            )
            assert entry.activity == ("running" if kind == "live" else "inactive")
        else:
            assert isinstance(entry, DiagnosticEntry), (kind, entry)
            assert entry.reason == shape[1]
    if "vanishes" not in kinds:  # a second, fresh listing sees the same snapshot
        assert again == entries
