"""``list_descendants``: pre-order, depth/parent, intermediates, cycles, depth limits, a property."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from host.cancel import CancelSignal
from host.sessions.model import Event, MessageEvent, SessionHeader, SubagentDescriptorEvent
from host.subagents.entries import ChildEntry, DiagnosticEntry
from host.subagents.errors import SubagentError
from tests.subagents.harness import World, continuable, one_shot


def write(
    world: World,
    sid: str,
    parent: str | None,
    descriptor: Any = None,
    *,
    origin: str | None = "subagent",
    created_at: int = 0,
    with_descriptor: bool = True,
) -> SessionHeader:
    """Store a settled session directly (any header, even a cyclic lineage)."""
    header = SessionHeader(id=sid, parent_session=parent, created_at=created_at, origin=origin)
    events = []
    if with_descriptor:
        events.append(
            Event(
                0, SubagentDescriptorEvent(continuable(sid) if descriptor is None else descriptor)
            )
        )
    events.append(Event(len(events), MessageEvent(role="assistant", content="done")))
    world.persistence.inner.open_writer(header, create=True, events=events).close()
    return header


async def test_pre_order_through_ordinary_and_one_shot_intermediates(world: World) -> None:
    world.root()
    world.child("a", "root")
    world.child("b", "root", descriptors=[one_shot("batch")])
    world.child("a1", "a", live=True)
    world.child("a2", "a", origin=None, descriptors=[])  # ordinary fork: walked, not listed
    world.child("a2x", "a2")
    world.child("b1", "b")
    world.child("b2", "b", descriptors=[{"version": 9}])
    world.child("b1x", "b1", descriptors=[])
    entries = await world.listing().list_descendants("root")
    assert entries == [
        ChildEntry("a", "continuable", "inactive", "a", parent_id="root", depth=1),
        ChildEntry("a1", "continuable", "running", "a1", parent_id="a", depth=2),
        ChildEntry("a2x", "continuable", "inactive", "a2x", parent_id="a2", depth=3),
        ChildEntry("b", "one-shot", "inactive", "batch", parent_id="root", depth=1),
        ChildEntry("b1", "continuable", "inactive", "b1", parent_id="b", depth=2),
        DiagnosticEntry("b1x", "corrupt", parent_id="b1", depth=3),
        DiagnosticEntry("b2", "unsupported", parent_id="b", depth=2),
    ]
    assert world.persistence.lists == 1
    assert "a1" not in world.persistence.inspects
    # children of the root are exactly the depth-1 rows
    children = await world.listing().list_children("root")
    assert [e.id for e in children] == [e.id for e in entries if e.depth == 1]


async def test_live_child_in_creation_window_is_omitted_but_walked(world: World) -> None:
    world.root()
    world.child("creating", "root", descriptors=[], live=True)
    world.child("grandchild", "creating")
    entries = await world.listing().list_descendants("root")
    assert entries == [
        ChildEntry(
            "grandchild", "continuable", "inactive", "grandchild", parent_id="creating", depth=2
        )
    ]


async def test_cycles_end(world: World) -> None:
    write(world, "r", "c2", origin=None, with_descriptor=False)  # the root's parent is below it
    write(world, "c1", "r", created_at=1)
    write(world, "c2", "c1", created_at=2)
    write(world, "self", "self", created_at=3)
    write(world, "x", "y", created_at=4)
    write(world, "y", "x", created_at=5)
    entries = await world.listing().list_descendants("r")
    assert [(e.id, e.parent_id, e.depth) for e in entries] == [("c1", "r", 1), ("c2", "c1", 2)]
    entries = await world.listing().list_descendants("x")
    assert [(e.id, e.depth) for e in entries] == [("y", 1)]
    assert await world.listing().list_descendants("self") == []


async def test_deep_chain_has_no_recursion_limit(world: World) -> None:
    depth = 5_000
    parent = "root"
    for i in range(depth):
        sid = f"n{i}"
        write(world, sid, parent, created_at=i)
        parent = sid
    entries = await world.listing().list_descendants("root")
    assert len(entries) == depth
    assert entries[-1].depth == depth and entries[-1].parent_id == f"n{depth - 2}"
    world.persistence.reset()
    assert await world.listing().list_descendants("root") == entries
    assert world.persistence.total_inspects == 0


async def test_descendants_cancellation(world: World) -> None:
    world.root()
    for i in range(10):
        world.child(f"c{i}", "root", record=False)
    signal = CancelSignal()
    world.persistence.on_inspect = lambda sid: signal.set()
    with pytest.raises(SubagentError) as caught:
        await world.listing().list_descendants("root", signal=signal)
    assert caught.value.code == "CANCELLED"


async def test_descendants_require_services(world: World) -> None:
    with pytest.raises(SubagentError) as caught:
        await world.listing(projections=None).list_descendants("root")
    assert caught.value.code == "SUBAGENT_CONTROL_PROJECTIONS_UNAVAILABLE"


KINDS = ["ordinary", "one-shot", "continuable", "corrupt", "no-descriptor", "newer", "vanishes"]

trees = st.integers(min_value=1, max_value=10).flatmap(
    lambda n: st.tuples(
        st.tuples(*[st.integers(min_value=0, max_value=i) for i in range(n)]),
        st.lists(st.sampled_from(KINDS), min_size=n, max_size=n),
        st.lists(st.integers(min_value=0, max_value=3), min_size=n, max_size=n),
        st.booleans(),
    )
)


def build(world: World, parents: tuple[int, ...], kinds: list[str], stamps: list[int]) -> None:
    """Node i+1 has parent ``parents[i]`` (0 is the root); created_at collisions are allowed."""
    write(world, "n0", None, origin=None, with_descriptor=False)
    for i, (parent, kind) in enumerate(zip(parents, kinds, strict=True), start=1):
        descriptor: Any = {
            "one-shot": one_shot(),
            "corrupt": {"version": 2, "mode": "continuable"},
            "newer": {"version": 5},
        }.get(kind)
        write(
            world,
            f"n{i}",
            f"n{parent}",
            descriptor,
            created_at=stamps[i - 1],
            origin=None if kind == "ordinary" else "subagent",
            with_descriptor=kind not in ("ordinary", "no-descriptor"),
        )


def expected_pre_order(parents: tuple[int, ...], stamps: list[int]) -> list[tuple[str, str, int]]:
    children: dict[int, list[int]] = {}
    for i, parent in enumerate(parents, start=1):
        children.setdefault(parent, []).append(i)
    out: list[tuple[str, str, int]] = []

    def visit(node: int, depth: int) -> None:
        for child in sorted(children.get(node, []), key=lambda c: (stamps[c - 1], f"n{c}")):
            out.append((f"n{child}", f"n{node}", depth))
            visit(child, depth + 1)

    visit(0, 1)
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees)
def test_random_trees_list_each_subagent_once_in_pre_order(tree) -> None:
    parents, kinds, stamps, warm = tree
    with tempfile.TemporaryDirectory() as tmp:
        world = World(Path(tmp))
        build(world, parents, kinds, stamps)
        vanishing = {f"n{i}" for i, kind in enumerate(kinds, start=1) if kind == "vanishes"}
        listing = world.listing()
        if warm:
            asyncio.run(listing.list_descendants("n0"))
        world.persistence.on_inspect = lambda sid: (
            world.log_path(sid).unlink() if sid in vanishing else None
        )
        entries = asyncio.run(listing.list_descendants("n0"))
    kind_of = {f"n{i}": kind for i, kind in enumerate(kinds, start=1)}
    expected = [row for row in expected_pre_order(parents, stamps) if kind_of[row[0]] != "ordinary"]
    assert [(e.id, e.parent_id, e.depth) for e in entries] == expected
    for entry in entries:
        kind = kind_of[entry.id]
        if kind in ("one-shot", "continuable"):
            assert isinstance(entry, ChildEntry) and entry.mode == kind
        elif kind == "vanishes":
            assert isinstance(entry, ChildEntry if warm else DiagnosticEntry)
        else:
            assert isinstance(entry, DiagnosticEntry)
            assert entry.reason == ("unsupported" if kind == "newer" else "corrupt")
