"""``Feed``: a real host's JSONL sessions and scripted model, followed from a ``seq`` — the
stored events after it once each, then live ones; streamed text before its item; the tree's
changes from a background child's appends."""

from __future__ import annotations

from typing import Any

from host import hookimpl
from host.agents import call, say
from host.clients.events import (
    AgentMessageDelta,
    ClientEvent,
    ItemCompleted,
    ItemStarted,
    SubagentStarted,
    SubagentStatus,
    ToolCallProgress,
    TurnCompleted,
    TurnStarted,
)
from host.clients.feed import Feed
from host.clients.items import items_of
from host.sessions.model import MessageEvent, TurnStart
from host.subagents.types import ChildRequest
from host.testing import HostHarness
from host.tools import ToolExec, ToolResult, tool
from tests.support import NoArgs


def stored_items(harness: HostHarness, session_id: str, after: int) -> list[object]:
    session = harness.services.sessions.live(session_id)
    return [item for e in session.events if e.seq > after for item in items_of(e, session_id)]


async def test_a_follower_gets_the_stored_events_after_its_seq_then_live_ones(
    harness: HostHarness,
) -> None:
    harness.model.script("root", say("first answer"), say("second answer"))
    root = await harness.root()
    root.followup("one")
    await root.wait_idle()
    feed = Feed(harness.host)
    heard: list[ClientEvent] = []
    stop = await feed.follow(root.id, heard.append, after_seq=1)
    replayed = list(heard)
    assert isinstance(replayed[-1], TurnCompleted)
    seqs = [getattr(event, "seq", None) for event in replayed]
    assert all(seq > 1 for seq in seqs if seq is not None)
    root.followup("two")
    await root.wait_idle()
    stop()
    feed.close()
    completed = [e.item for e in heard if isinstance(e, ItemCompleted)]
    assert completed == stored_items(harness, root.id, 1)  # each stored item once, in order
    turns = [e for e in heard if isinstance(e, TurnStarted | TurnCompleted)]
    names = ["TurnCompleted", "TurnStarted", "TurnCompleted"]  # the first began at seq 1
    assert [type(t).__name__ for t in turns] == names
    first_turn = turns[0].turn_id
    assert all(e.turn_id == first_turn for e in replayed if isinstance(e, ItemCompleted))
    live = heard[len(replayed) :]
    started = next(i for i, e in enumerate(live) if isinstance(e, ItemStarted) and e.seq is None)
    deltas = [e for e in live if isinstance(e, AgentMessageDelta)]
    done = next(e for e in live if isinstance(e, ItemCompleted) and e.stream_id)
    assert "".join(d.delta for d in deltas) == "second answer" == done.item.text
    assert {d.item_id for d in deltas} == {done.stream_id, live[started].item.id}
    assert live.index(done) > max(live.index(d) for d in deltas) > started
    for index, event in enumerate(heard):  # every other item is started just before it ends
        if isinstance(event, ItemCompleted) and event.stream_id is None:
            before = heard[index - 1]
            assert isinstance(before, ItemStarted)
            assert (before.item, before.seq, before.session_id) == (event.item, event.seq, root.id)


async def test_without_a_seq_only_what_comes_next_and_the_tree(harness: HostHarness) -> None:
    harness.model.script("research", say("found it"))
    root = await harness.root()
    feed = Feed(harness.host)
    heard: list[ClientEvent] = []
    await feed.follow(root.id, heard.append, after_seq=None)
    assert heard == []
    started = await harness.subagents.start_continuable(
        "spawn", ChildRequest("look"), parent=root, label="research"
    )
    await harness.settled(started.child_id, root)
    feed.close()
    joined = [e for e in heard if isinstance(e, SubagentStarted)]
    assert [(e.subagent_id, e.parent_id, e.label, e.depth) for e in joined] == [
        (started.child_id, root.id, "research", 1)
    ]
    statuses = [e.status for e in heard if isinstance(e, SubagentStatus)]
    assert statuses == ["running", "idle", "settled"]
    settled = [e.item for e in heard if isinstance(e, ItemCompleted)]
    assert [item.type for item in settled][:1] == ["subagentSettled"]
    assert settled[0].subagent_id == started.child_id


async def test_an_append_while_the_subagents_are_listed_keeps_the_stored_turn(
    harness: HostHarness, monkeypatch
) -> None:
    root = await harness.root()
    root.session.append(TurnStart("turn_stored"))
    listed = harness.subagents.list_descendants

    async def list_descendants(root_id: str) -> Any:
        """An append lands while the stored subagents are listed (the follow's await)."""
        root.session.append(MessageEvent("assistant", "live meanwhile"))
        return await listed(root_id)

    monkeypatch.setattr(harness.subagents, "list_descendants", list_descendants)
    feed = Feed(harness.host)
    heard: list[ClientEvent] = []
    await feed.follow(root.id, heard.append, after_seq=-1)
    root.session.append(MessageEvent("assistant", "live after"))
    feed.close()
    completed = [(e.item.text, e.turn_id) for e in heard if isinstance(e, ItemCompleted)]
    assert completed == [("live meanwhile", "turn_stored"), ("live after", "turn_stored")]
    assert [e.turn_id for e in heard if isinstance(e, TurnStarted)] == ["turn_stored"]


async def test_a_thread_nobody_follows_any_more_is_forgotten(harness: HostHarness) -> None:
    harness.model.script("root", say("answer"))
    root = await harness.root()
    feed = Feed(harness.host)
    first = await feed.follow(root.id, lambda _event: None, after_seq=None)
    heard: list[ClientEvent] = []
    second = await feed.follow(root.id, heard.append, after_seq=None)
    first()
    assert feed.tree(root.id) is not None  # one follower is left
    second()
    assert feed.tree(root.id) is None  # its turn, tree and stream are let go
    root.followup("more")
    await root.wait_idle()
    assert heard == []
    feed.close()


@tool("slow", "Reports how far it got.", NoArgs)
async def slow(args: NoArgs, exec: ToolExec) -> ToolResult:
    exec.report_progress("half way", 1, 2)
    return ToolResult("done")


class SlowPlugin:
    @staticmethod
    @hookimpl
    def register_tools(register: Any) -> None:
        register(slow)


async def test_a_tool_calls_progress_reaches_followers_and_is_never_stored(
    make_harness: Any,
) -> None:
    harness = make_harness(("slow", SlowPlugin))
    harness.model.script("root", call("slow"), say("ok"))
    root = await harness.root()
    feed = Feed(harness.host)
    heard: list[ClientEvent] = []
    stop = await feed.follow(root.id, heard.append, after_seq=None)
    root.followup("go")
    await root.wait_idle()
    stop()
    feed.close()
    [progress] = [e for e in heard if isinstance(e, ToolCallProgress)]
    [result] = [e for e in heard if isinstance(e, ItemCompleted) and e.item.type == "toolResult"]
    assert (progress.thread_id, progress.message, progress.progress, progress.total) == (
        root.id, "half way", 1, 2,
    )
    assert progress.item_id == result.item.call_id and heard.index(progress) < heard.index(result)
    replayed: list[ClientEvent] = []
    (await Feed(harness.host).follow(root.id, replayed.append, after_seq=0))()
    assert not any(isinstance(e, ToolCallProgress) for e in replayed)
