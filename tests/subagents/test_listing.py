"""``list_children``: the identity rule, read counts, diagnostics, failures and cancellation."""

from __future__ import annotations

import json

import pytest

from host.cancel import CancelSignal
from host.sessions.model import MessageEvent, PluginEvent, SessionHeader, SubagentDescriptorEvent
from host.sessions.projections import Projections, ProjectionUnit
from host.subagents.entries import ChildEntry, DiagnosticEntry
from host.subagents.errors import SubagentError
from host.subagents.identity import IDENTITY_KEY, IDENTITY_UNIT, IdentityState
from host.subagents.listing import SubagentListing
from tests.subagents.harness import World, continuable, one_shot


def shape(entries: list) -> list[tuple]:
    """Entries without ids: what twins must share."""
    return [
        (type(e).__name__, getattr(e, "mode", None), getattr(e, "label", None)) for e in entries
    ]


async def test_cold_children_inspected_once_and_live_never(world: World) -> None:
    world.root()
    world.child("c1", "root", record=False)
    world.child("c2", "root", descriptors=[one_shot("quick")], record=False)
    world.child("c3", "root", live=True, record=False)
    entries = await world.listing(index=False).list_children("root")
    assert entries == [
        ChildEntry("c1", "continuable", "inactive", "c1"),
        ChildEntry("c2", "one-shot", "inactive", "quick"),
        ChildEntry("c3", "continuable", "running", "c3"),
    ]
    assert dict(world.persistence.inspects) == {"c1": 1, "c2": 1}
    assert world.persistence.lists == 1


async def test_warm_listing_reads_no_log(world: World) -> None:
    world.root()
    for i in range(5):
        world.child(f"c{i}", "root", record=False)
    listing = world.listing()
    first = await listing.list_children("root")
    assert world.persistence.total_inspects == 5
    world.persistence.reset()
    assert await listing.list_children("root") == first
    assert world.persistence.total_inspects == 0
    # another process (a fresh index object over the same file) is warm too
    assert await world.listing(index=world.fresh_index()).list_children("root") == first
    assert world.persistence.total_inspects == 0


async def test_recorded_descriptors_make_the_first_listing_warm(world: World) -> None:
    world.root()
    world.child("c1", "root")
    world.child("c2", "root", descriptors=[one_shot()])
    entries = await world.listing(index=world.fresh_index()).list_children("root")
    assert [e.id for e in entries] == ["c1", "c2"]
    assert world.persistence.total_inspects == 0


async def test_missing_row_falls_back_to_one_inspect(world: World) -> None:
    world.root()
    world.child("c1", "root")
    world.child("c2", "root", record=False)
    entries = await world.listing(index=world.fresh_index()).list_children("root")
    assert [e.id for e in entries] == ["c1", "c2"]
    assert dict(world.persistence.inspects) == {"c2": 1}


async def test_stale_fingerprint_is_not_trusted(world: World) -> None:
    world.root()
    header = world.child("c1", "root", record=False)
    other = SessionHeader(id="c1", parent_session="root", created_at=1, origin="subagent")
    world.index.record(other, continuable("POISON"), 0)  # same id, another header
    entries = await world.listing(index=world.fresh_index()).list_children("root")
    assert entries == [ChildEntry("c1", "continuable", "inactive", "c1")]
    assert dict(world.persistence.inspects) == {"c1": 1}
    assert world.fresh_index().lookup(header) is not None  # written back


async def test_row_below_seed_length_is_not_trusted(world: World) -> None:
    from host.subagents.index import fingerprint

    parent = world.root(events=3)
    seed = [e.body for e in parent.events]
    header = world.child("c1", "root", seed=seed, record=False)
    assert header.seed_length == 3
    world.index_path.parent.mkdir(parents=True, exist_ok=True)
    row = {
        "id": "c1",
        "fp": fingerprint(header),
        "seq": 1,
        "v": 1,
        "verdict": "identity",
        "mode": "continuable",
        "provider": "spawn",
        "label": "POISON",
    }
    world.index_path.write_text(json.dumps(row) + "\n")
    entries = await world.listing(index=world.fresh_index()).list_children("root")
    assert entries == [ChildEntry("c1", "continuable", "inactive", "c1")]
    assert dict(world.persistence.inspects) == {"c1": 1}


async def test_missing_index_file_falls_back(world: World) -> None:
    world.root()
    world.child("c1", "root")
    world.child("c2", "root")
    world.index_path.unlink()
    entries = await world.listing(index=world.fresh_index()).list_children("root")
    assert [e.id for e in entries] == ["c1", "c2"]
    assert dict(world.persistence.inspects) == {"c1": 1, "c2": 1}


@pytest.mark.parametrize("damage", ["garbage", "directory", "truncated"])
async def test_unreadable_index_falls_back(world: World, damage: str) -> None:
    world.root()
    world.child("c1", "root")
    world.child("c2", "root")
    expected = await world.listing(index=False).list_children("root")
    world.persistence.reset()
    if damage == "garbage":
        world.index_path.write_bytes(b"\x00\xff not json\n{]\n" * 3)
    elif damage == "directory":
        world.index_path.unlink()
        world.index_path.mkdir()
    else:
        data = world.index_path.read_bytes()
        world.index_path.write_bytes(data[: len(data) // 2])
    assert await world.listing(index=world.fresh_index()).list_children("root") == expected
    inspected = dict(world.persistence.inspects)
    assert set(inspected) <= {"c1", "c2"} and set(inspected.values()) <= {1}
    if damage != "truncated":
        assert inspected == {"c1": 1, "c2": 1}


async def test_deleting_or_corrupting_the_index_changes_no_result(world: World) -> None:
    world.root()
    world.child("ok", "root")
    world.child("two", "root", descriptors=[None, None])
    world.child("none", "root", descriptors=[])
    world.child("newer", "root", descriptors=[{"version": 3, "mode": "x"}])
    world.child("bad", "root", descriptors=[{"version": 2, "mode": "continuable"}])
    world.child("live", "root", live=True)
    world.child("fork", "root", origin=None, descriptors=[])
    baseline = await world.listing(index=False).list_children("root")
    warm = world.listing()
    assert await warm.list_children("root") == baseline
    assert await warm.list_children("root") == baseline
    world.index_path.unlink()
    assert await world.listing(index=world.fresh_index()).list_children("root") == baseline
    world.index_path.write_bytes(b"garbage\n")
    assert await world.listing(index=world.fresh_index()).list_children("root") == baseline
    assert await world.listing(index=world.fresh_index()).list_children("root") == baseline


async def test_several_own_descriptors_are_corrupt(world: World) -> None:
    world.root()
    world.child("c1", "root", descriptors=[None, one_shot()], record=False)
    world.child("c2", "root", descriptors=[None, None])  # recorded: the index knows too
    world.child("c3", "root", descriptors=[None, None], live=True)
    for index in (False, True):
        entries = await world.listing(index=index).list_children("root")
        assert entries == [
            DiagnosticEntry("c1", "corrupt"),
            DiagnosticEntry("c2", "corrupt"),
            DiagnosticEntry("c3", "corrupt"),
        ]


async def test_no_own_descriptor_settled_is_corrupt_live_is_omitted(world: World) -> None:
    world.root()
    world.child("settled", "root", descriptors=[])
    world.child("creating", "root", descriptors=[], live=True)
    entries = await world.listing().list_children("root")
    assert entries == [DiagnosticEntry("settled", "corrupt")]
    # not cached: no descriptor seq to gate a row on
    world.persistence.reset()
    await world.listing().list_children("root")
    assert dict(world.persistence.inspects) == {"settled": 1}


async def test_fork_seed_never_lends_an_ancestor_identity(world: World) -> None:
    world.root()
    world.child("mid", "root", live=True, descriptors=[continuable("ancestor")])
    mid = world.store.live("mid")
    seed = [e.body for e in mid.events]
    # a fork-seeded subagent child of mid: its only descriptor is the copied one
    world.child("copied", "mid", seed=seed, descriptors=[])
    world.child("copied-live", "mid", seed=seed, descriptors=[], live=True)
    world.child("own", "mid", seed=seed, descriptors=[continuable("mine")])
    world.child("ordinary", "mid", seed=seed, descriptors=[], origin=None)
    world.index.record(world.store.live("copied-live").header, continuable("ancestor"), 0)
    for index in (False, True):
        entries = await world.listing(index=index).list_children("mid")
        assert entries == [
            DiagnosticEntry("copied", "corrupt"),
            ChildEntry("own", "continuable", "inactive", "mine"),
        ]


async def test_compacted_and_uncompacted_twins_list_identically(world: World) -> None:
    world.root("p1")
    world.root("p2")
    for parent, compact in (("p1", False), ("p2", True)):
        world.child(
            f"{parent}-a", parent, descriptors=[continuable("a")], events=5, compact=compact
        )
        world.child(f"{parent}-b", parent, descriptors=[one_shot()], events=3, compact=compact)
        world.child(f"{parent}-c", parent, descriptors=[None, None], compact=compact)
    for index in (False, True):
        listing = world.listing(index=index)
        one = await listing.list_children("p1")
        two = await listing.list_children("p2")
        assert shape(one) == shape(two) and len(one) == 3


async def test_order_is_created_at_then_id_without_ordinary_forks(world: World) -> None:
    world.root()
    world.child("b", "root", created_at=50)
    world.child("a", "root", created_at=50)
    world.child("z", "root", created_at=10, live=True)
    world.child("fork", "root", created_at=5, origin=None, descriptors=[])
    world.child("fork2", "root", created_at=6, origin=None)  # even with a descriptor
    world.child("elsewhere", "other", created_at=1)
    entries = await world.listing().list_children("root")
    assert [e.id for e in entries] == ["z", "a", "b"]


async def test_unknown_version_is_unsupported_garbage_is_corrupt(world: World) -> None:
    world.root()
    secret = {"version": 2, "mode": "continuable", "provider": "spawn", "label": "SECRET", "x": 1}
    world.child("newer", "root", descriptors=[{"version": 7, "mode": "continuable"}])
    world.child("garbage", "root", descriptors=[secret])
    world.child("notobj", "root", descriptors=["SECRET-string"])
    for index in (False, True):
        entries = await world.listing(index=index).list_children("root")
        assert entries == [
            DiagnosticEntry("newer", "unsupported"),
            DiagnosticEntry("garbage", "corrupt"),
            DiagnosticEntry("notobj", "corrupt"),
        ]
        assert "SECRET" not in repr(entries)


async def test_torn_child_log_still_lists(world: World) -> None:
    world.root()
    world.child("torn", "root", record=False)
    with world.log_path("torn").open("ab") as file:
        file.write(b'{"seq":99,"kind":"mess')
    entries = await world.listing().list_children("root")
    assert entries == [ChildEntry("torn", "continuable", "inactive", "torn")]


async def test_failed_inspection_is_unavailable_and_retried(world: World) -> None:
    world.root()
    world.child("c1", "root", record=False)
    world.child("c2", "root", record=False)
    world.persistence.fail_inspect.add("c2")
    listing = world.listing()
    for _ in range(2):
        world.persistence.reset()
        entries = await listing.list_children("root")
        assert entries[1] == DiagnosticEntry("c2", "unavailable")
        assert entries[0].id == "c1"
        assert world.persistence.inspects["c2"] == 1
    world.persistence.fail_inspect.clear()
    world.persistence.reset()
    assert (await listing.list_children("root"))[1] == ChildEntry(
        "c2", "continuable", "inactive", "c2"
    )
    assert dict(world.persistence.inspects) == {"c2": 1}


async def test_vanished_log_is_unavailable(world: World) -> None:
    world.root()
    world.child("gone", "root", record=False)
    world.persistence.on_inspect = lambda sid: world.log_path(sid).unlink()
    assert await world.listing().list_children("root") == [DiagnosticEntry("gone", "unavailable")]


async def test_changed_header_on_inspection_is_corrupt(world: World) -> None:
    world.root()
    world.child("c1", "root", record=False)

    def rewrite(session_id: str) -> None:
        path = world.log_path(session_id)
        lines = path.read_bytes().split(b"\n", 1)
        path.write_bytes(
            lines[0].replace(b'"delegation_depth":0', b'"delegation_depth":4') + b"\n" + lines[1]
        )

    world.persistence.on_inspect = rewrite
    assert await world.listing().list_children("root") == [DiagnosticEntry("c1", "corrupt")]


async def test_provider_absence_does_not_hide_a_child(world: World) -> None:
    world.root()
    world.child("c1", "root", descriptors=[continuable("x", provider="uninstalled-plugin")])
    entries = await world.listing(index=False).list_children("root")
    assert entries == [ChildEntry("c1", "continuable", "inactive", "x")]


async def test_live_only_without_persistence(world: World) -> None:
    world.root()
    world.child("live", "root", live=True)
    world.child("settled", "root")
    entries = await world.listing(persistence=None).list_children("root")
    assert entries == [ChildEntry("live", "continuable", "running", "live")]


async def test_unregistered_unit_still_answers_live_children(world: World) -> None:
    from host.sessions.store import SessionStore

    world.projections = Projections()  # nobody registered the identity unit
    world.store = SessionStore(world.persistence, world.projections)
    world.root()
    world.child("live", "root", live=True)
    world.child("settled", "root", record=False)
    entries = await world.listing().list_children("root")
    assert entries == [
        ChildEntry("live", "continuable", "running", "live"),
        ChildEntry("settled", "continuable", "inactive", "settled"),
    ]
    assert dict(world.persistence.inspects) == {"settled": 1}


@pytest.mark.parametrize(
    ("missing", "code"),
    [
        ("sessions", "SUBAGENT_CONTROL_SESSION_STORE_UNAVAILABLE"),
        ("projections", "SUBAGENT_CONTROL_PROJECTIONS_UNAVAILABLE"),
    ],
)
async def test_absent_services_fail_even_with_zero_children(
    world: World, missing: str, code: str
) -> None:
    with pytest.raises(SubagentError) as caught:
        await world.listing(**{missing: None}).list_children("nobody")
    assert caught.value.code == code
    with pytest.raises(SubagentError) as caught:
        await SubagentListing(
            sessions=None if missing == "sessions" else world.store,
            projections=None if missing == "projections" else world.projections,
        ).list_children("nobody")
    assert caught.value.code == code
    assert world.persistence.lists == 0


async def test_persistence_listing_failure_fails_the_call(world: World) -> None:
    world.root()
    world.child("c1", "root", live=True)
    world.persistence.fail_list = True
    with pytest.raises(SubagentError) as caught:
        await world.listing().list_children("root")
    assert caught.value.code == "UNAVAILABLE"
    assert caught.value.__cause__ is not None


async def test_fold_failure_is_contained_to_that_child(world: World) -> None:
    def fold(state: IdentityState, event):  # the identity unit, plus a bug
        if isinstance(event.body, PluginEvent) and event.body.type == "boom":
            raise RuntimeError("boom")
        return IDENTITY_UNIT.fold(state, event)

    projections = Projections()
    projections.register(ProjectionUnit(IDENTITY_KEY, IdentityState, fold))
    world.projections = projections
    from host.sessions.store import SessionStore

    world.store = SessionStore(world.persistence, projections)
    world.root()
    world.child("fine", "root")
    world.child("cold-boom", "root", live=True)
    world.store.live("cold-boom").append(PluginEvent(plugin="t", type="boom"))
    world.store.release("cold-boom")
    world.child("live-boom", "root", live=True)
    world.store.live("live-boom").append(PluginEvent(plugin="t", type="boom"))
    entries = await world.listing().list_children("root")
    assert entries == [
        ChildEntry("fine", "continuable", "inactive", "fine"),
        DiagnosticEntry("cold-boom", "corrupt"),
        DiagnosticEntry("live-boom", "corrupt"),
    ]


async def test_cancelled_before_anything(world: World) -> None:
    world.root()
    world.child("c1", "root")
    signal = CancelSignal()
    signal.set()
    with pytest.raises(SubagentError) as caught:
        await world.listing().list_children("root", signal=signal)
    assert caught.value.code == "CANCELLED"
    assert world.persistence.lists == 0


async def test_cancelled_during_inspection_is_never_a_partial_success(world: World) -> None:
    world.root()
    for i in range(20):
        world.child(f"c{i:02}", "root", record=False)
    signal = CancelSignal()
    world.persistence.on_inspect = lambda sid: signal.set() if sid == "c03" else None
    with pytest.raises(SubagentError) as caught:
        await world.listing().list_children("root", signal=signal)
    assert caught.value.code == "CANCELLED"
    assert world.persistence.total_inspects < 20


async def test_cancelled_while_listing_persistence(world: World) -> None:
    world.root()
    world.child("c1", "root")
    signal = CancelSignal()
    inner_list = world.persistence.list

    async def list_then_cancel(*, signal=None):
        result = await inner_list(signal=signal)
        signal.set()
        return result

    world.persistence.list = list_then_cancel  # type: ignore[method-assign]
    with pytest.raises(SubagentError) as caught:
        await world.listing().list_children("root", signal=signal)
    assert caught.value.code == "CANCELLED"
    assert world.persistence.total_inspects == 0


async def test_live_child_gains_identity_after_its_creation_window(world: World) -> None:
    world.root()
    world.child("c1", "root", descriptors=[], live=True)
    listing = world.listing()
    assert await listing.list_children("root") == []
    session = world.store.live("c1")
    event = session.append(SubagentDescriptorEvent(continuable("late")))
    world.index.record(session.header, continuable("late"), event.seq)
    session.append(MessageEvent(role="assistant", content="done"))
    assert await listing.list_children("root") == [
        ChildEntry("c1", "continuable", "running", "late")
    ]
    world.store.release("c1")
    world.persistence.reset()
    assert await listing.list_children("root") == [
        ChildEntry("c1", "continuable", "inactive", "late")
    ]
    assert world.persistence.total_inspects == 0
