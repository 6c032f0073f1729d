"""The event feed: what happens to a thread, derived from the session logs.

Every event of the feed comes from an append the host's ``SessionStore.observe`` reports (or
from the stored log, on replay), except streamed text and tool progress, which come from the
thread's live agent (``Agent.on_stream``) and are neither stored nor replayed. The thread's
own appends give turns, transcript items (``host.clients.items``) and approvals; appends of
the sessions below it give the subagent tree's changes (``host.clients.tree``).

``Feed.follow(thread_id, listener, after_seq=n)`` first replays the stored events of the
thread after ``seq`` n (turns, items, approvals), then states its subagent tree as it is now
(``subagent/started`` and ``subagent/status`` for each member: the tree is state, not a stored
history of the thread), then calls the listener with live events: appends that arrive while
the stored log is read wait, and those the replay already covered are dropped, so a follower
sees each stored event once and misses none. A thread's state (turn, tree, stream) is kept
while it has followers and dropped when its last one leaves.

Every stored item is announced by ``item/started`` then ``item/completed`` (both with its
``seq``), but an ``agentMessage`` whose text was streamed: its ``item/started`` came with
its first delta (no ``seq``: the text was not stored yet).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import attrs

from host.agents.models import ModelResponse, StreamEvent, TextDelta
from host.clients.commands import RunningHost, events_of
from host.clients.events import (
    AgentMessageDelta,
    ApprovalDecidedEvent,
    ApprovalRequestedEvent,
    ClientEvent,
    ItemCompleted,
    ItemStarted,
    Origin,
    SubagentStarted,
    SubagentStatus,
    ToolCallProgress,
    TurnCompleted,
    TurnStarted,
)
from host.clients.items import Item, items_of
from host.clients.tree import Change, Tree, join_stored
from host.errors import HostError
from host.sessions.model import (
    ApprovalDecided,
    ApprovalRequested,
    Event,
    MessageEvent,
    TurnEnd,
    TurnStart,
    new_id,
)
from host.tools.tool import ToolProgress

if TYPE_CHECKING:
    from host.disposal import Disposer
    from host.sessions.session import Session

log = logging.getLogger(__name__)

Listener = Callable[[ClientEvent], None]


REPLAYED = (
    TurnStarted,
    TurnCompleted,
    ItemStarted,
    ItemCompleted,
    ApprovalRequestedEvent,
    ApprovalDecidedEvent,
)
"""The events a replay makes (from the thread's own log, with a ``seq``); the others are
live only."""


def _replayed(event: ClientEvent) -> int | None:
    """The ``seq`` of the thread's log an event comes from, for those a replay makes."""
    return event.seq if isinstance(event, REPLAYED) else None


@attrs.define(eq=False)
class _Follower:
    listener: Listener
    covered: int = -1  # the last seq of the thread's log the replay covered
    waiting: list[ClientEvent] | None = attrs.field(factory=list)  # None once live

    def deliver(self, event: ClientEvent) -> None:
        if self.waiting is not None:
            self.waiting.append(event)
            return
        seq = _replayed(event)
        if seq is None or seq > self.covered:
            self.listener(event)


class _Thread:
    """One followed session: the turn in progress, its tree, its stream and its followers."""

    def __init__(self, thread_id: str, label_of: Callable[[str], str | None]) -> None:
        self.id = thread_id
        self.turn_id: str | None = None
        self.folded = -1  # the last seq folded into turn_id
        self.tree = Tree(thread_id, label_of)
        self.followers: list[_Follower] = []
        self.stream_stop: Disposer | None = None
        self.streamer: object = None  # the live agent whose stream is heard
        self.streaming: str | None = None  # the stream whose text is arriving
        self.streamed: str | None = None  # the stream the next agentMessage completes

    def stop_stream(self) -> None:
        """Stop hearing the live agent's stream."""
        if self.stream_stop is not None:
            self.stream_stop()
        self.stream_stop, self.streamer = None, None

    def fold(self, events: Sequence[Event]) -> list[ClientEvent]:
        """The events these stored events of the thread's own log make, in order."""
        made: list[ClientEvent] = []
        for event in events:
            if event.seq <= self.folded:
                continue
            self.folded = event.seq
            made.extend(self._translate(event))
        return made

    def _translate(self, event: Event) -> list[ClientEvent]:
        body, seq, tid = event.body, event.seq, self.id
        if isinstance(body, TurnStart):
            self.turn_id = body.turn_id
            return [TurnStarted(tid, tid, seq, body.turn_id)]
        if isinstance(body, TurnEnd):
            self.turn_id = None
            return [TurnCompleted(tid, tid, seq, body.turn_id, body.stop_reason, body.error)]
        if isinstance(body, ApprovalRequested):
            origin = Origin.of(body.origin)
            return [
                ApprovalRequestedEvent(
                    tid, tid, seq, body.request_id, origin, body.tool, body.arguments,
                    body.question, body.choices,
                )
            ]
        if isinstance(body, ApprovalDecided):
            return [
                ApprovalDecidedEvent(
                    tid, tid, seq, body.request_id, body.decision, body.reason, body.answer
                )
            ]
        made: list[ClientEvent] = []
        for item in items_of(event, tid):
            stream = None
            if item.type == "agentMessage" and isinstance(body, MessageEvent):
                stream, self.streamed, self.streaming = self.streaming or self.streamed, None, None
            if stream is None:
                made.append(ItemStarted(tid, self.turn_id, item, tid, seq))
            made.append(ItemCompleted(tid, tid, seq, self.turn_id, item, stream))
        return made

    def streamed_event(self, event: StreamEvent) -> list[ClientEvent]:
        """The events a piece of the live agent's stream makes."""
        if isinstance(event, TextDelta) and event.text:
            made: list[ClientEvent] = []
            if self.streaming is None:
                self.streaming = new_id("stream_")
                item = Item("agentMessage", self.streaming)
                made.append(ItemStarted(self.id, self.turn_id, item))
            made.append(AgentMessageDelta(self.id, self.turn_id, self.streaming, event.text))
            return made
        if isinstance(event, ToolProgress):
            return [
                ToolCallProgress(
                    self.id, self.turn_id, event.tool_call_id, event.message,
                    event.progress, event.total,
                )
            ]
        if isinstance(event, ModelResponse):
            self.streamed, self.streaming = self.streaming, None
        return []

    def tree_events(self, session: Session, events: Sequence[Event]) -> list[ClientEvent]:
        """``subagent/*`` events for the tree changes an append makes."""
        changes = self.tree.observe(session.id, session.header.parent_session, events)
        seq = events[-1].seq if events else 0
        return [self._tree_event(change, session.id, seq) for change in changes]

    def tree_state(self) -> list[ClientEvent]:
        """The tree as it is now: each member started (parents first), then its status
        (no ``seq``: a state, not a stored event)."""
        made: list[ClientEvent] = []
        for member in self.tree.members():
            made.append(self._tree_event(Change.of(member, joined=True), member.id, None))
            made.append(self._tree_event(Change.of(member), member.id, None))
        return made

    def _tree_event(self, change: Change, session_id: str, seq: int | None) -> ClientEvent:
        member = change.member
        if change.joined:
            return SubagentStarted(
                self.id, session_id, seq, self.turn_id, member.id, member.parent_id,
                member.label, member.depth,
            )
        return SubagentStatus(self.id, session_id, seq, self.turn_id, member.id, change.status)


class Feed:
    """The event feed of every followed thread of one host (module docstring)."""

    def __init__(self, host: RunningHost) -> None:
        self._host = host
        self._threads: dict[str, _Thread] = {}
        self._stop = host.services.sessions.observe(self._appended)

    def close(self) -> None:
        """Stop observing (followers hear nothing more)."""
        self._stop()
        for thread in self._threads.values():
            thread.stop_stream()
        self._threads.clear()

    async def follow(
        self, thread_id: str, listener: Listener, *, after_seq: int | None
    ) -> Disposer:
        """Replay the thread's stored events after ``after_seq`` and its tree as it is now
        (None: neither, only what comes next) to ``listener``, then live ones; returns the
        disposer that stops it. A thread that is neither live nor stored raises
        ``ClientError`` ``UNKNOWN_THREAD``."""
        thread = self._thread(thread_id)
        follower = _Follower(listener)
        thread.followers.append(follower)

        def stop() -> None:
            if follower in thread.followers:
                thread.followers.remove(follower)
            if not thread.followers and self._threads.get(thread_id) is thread:
                thread.stop_stream()  # the last follower left: nobody needs its state
                del self._threads[thread_id]

        try:
            stored = await events_of(self._host, thread_id)
            newer = after_seq is not None and bool(stored) and stored[-1].seq > after_seq
            replay = translate(thread_id, stored) if newer else []  # nothing to replay: skipped
            thread.fold(stored)  # before any await: an append meanwhile folds after these
            follower.covered = stored[-1].seq if stored else -1
            if stored and not thread.tree.members():
                await self._join_stored(thread)
        except BaseException:
            stop()
            raise
        if after_seq is not None:
            for event in replay:
                seq = _replayed(event)
                if seq is not None and seq > after_seq:
                    follower.listener(event)
            for event in thread.tree_state():
                follower.listener(event)
        waiting, follower.waiting = follower.waiting or [], None
        for event in waiting:
            follower.deliver(event)
        self._attach_stream(thread)
        return stop

    def tree(self, thread_id: str) -> Tree | None:
        """The subagent tree of a followed thread (None when nobody follows it)."""
        thread = self._threads.get(thread_id)
        return thread.tree if thread is not None else None

    def turn(self, thread_id: str) -> str | None:
        """The turn in progress of a followed thread, as its log tells it (a turn started and
        not ended); None between turns, or when nobody follows it."""
        thread = self._threads.get(thread_id)
        return thread.turn_id if thread is not None else None

    async def _join_stored(self, thread: _Thread) -> None:
        """A thread with a history knows the subagents it had (as the live registry has
        them, else settled until they act)."""
        service = self._host.services.find("subagents")
        if service is None:
            return
        try:
            await join_stored(thread.tree, service, self._host.services.agents.status)
        except HostError:
            log.exception("could not list the subagents of %s", thread.id)

    def _thread(self, thread_id: str) -> _Thread:
        thread = self._threads.get(thread_id)
        if thread is None:
            agents = self._host.services.agents

            def label_of(agent_id: str) -> str | None:
                agent = agents.get(agent_id)
                return agent.label if agent is not None else None

            thread = self._threads[thread_id] = _Thread(thread_id, label_of)
        return thread

    def _attach_stream(self, thread: _Thread) -> None:
        """Hear the stream of the thread's live agent (once per agent: a subagent sent more
        work after it settled is a new one)."""
        agent = self._host.services.agents.get(thread.id)
        if agent is None or agent is thread.streamer:
            return
        thread.stop_stream()
        thread.streamer = agent
        thread.stream_stop = agent.on_stream(lambda event: self._streamed(thread, event))

    def _streamed(self, thread: _Thread, event: StreamEvent) -> None:
        self._send(thread, thread.streamed_event(event))

    def _appended(self, session: Session, events: Sequence[Event]) -> None:
        for thread in list(self._threads.values()):
            made = thread.tree_events(session, events)
            if session.id == thread.id:
                made = thread.fold(events) + made
                self._attach_stream(thread)
            self._send(thread, made)

    def _send(self, thread: _Thread, made: Sequence[ClientEvent]) -> None:
        for event in made:
            for follower in list(thread.followers):
                follower.deliver(event)


def translate(thread_id: str, events: Sequence[Event]) -> list[ClientEvent]:
    """The events a replay of ``events`` (the thread's stored log) makes, in order."""
    return _Thread(thread_id, lambda _id: None).fold(events)
