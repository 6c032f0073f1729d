"""Listing as a new process (every CLI invocation) sees it: a fresh persistence, store and
identity index over a data directory that another process has changed since it last listed."""

from __future__ import annotations

from pathlib import Path

from tests.sessions.header_reads import counted, settle
from tests.subagents.harness import World


async def test_a_new_process_lists_children_and_descendants_after_changes(
    tmp_path: Path,
) -> None:
    other = World(tmp_path)  # the process that creates and removes children
    other.root("root")
    for child in ("c1", "c2", "c3"):
        other.child(child, "root")
    other.child("g1", "c2")
    settle()
    first = World(tmp_path)
    first_reads = counted(first.persistence.inner)
    assert [e.id for e in await first.listing().list_children("root")] == ["c1", "c2", "c3"]
    assert len(first_reads) == 5 and first.persistence.total_inspects == 0
    other.log_path("c1").unlink()
    other.child("c4", "root")
    second = World(tmp_path)
    second_reads = counted(second.persistence.inner)
    listing = second.listing()
    assert [e.id for e in await listing.list_children("root")] == ["c2", "c3", "c4"]
    assert second_reads == ["c4.jsonl"]  # the rest came from the header cache file
    descendants = await listing.list_descendants("root")
    assert [(e.id, e.parent_id, e.depth) for e in descendants] == [
        ("c2", "root", 1),
        ("g1", "c2", 2),
        ("c3", "root", 1),
        ("c4", "root", 1),
    ]
    assert second.persistence.total_inspects == 0  # identities from the index, as before
