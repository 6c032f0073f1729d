"""The event feed: what happens to a thread, derived from the session logs.

Every event of the feed comes from an append the host's ``SessionStore.observe`` reports (or
from the stored log, on replay), except streamed text, which comes from the thread's live
agent (``Agent.on_stream``) and is neither stored nor replayed. The thread's own appends give
turns, transcript items (``host.clients.items``) and approvals; appends of the sessions below
it give the subagent tree's changes (``host.clients.tree``).

``Feed.follow(thread_id, listener, after_seq=n)`` first replays the stored events of the
thread after ``seq`` n (turns, items, approvals; the tree is live only), then calls the
listener with live events: appends that arrive while the stored log is read wait, and those
the replay already covered are dropped, so a follower sees each stored event once and misses
none.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from host.agents.models import ModelResponse, StreamEvent, TextDelta
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

if TYPE_CHECKING:
    from host.app import Host
    from host.disposal import Disposer
    from host.sessions.session import Session

log = logging.getLogger(__name__)

Listener = Callable[[ClientEvent], None]


REPLAYED = (
    TurnStarted, TurnCompleted, ItemCompleted, ApprovalRequestedEvent, ApprovalDecidedEvent
)
"""The events a replay makes (from the thread's own log); the others are live only."""


@attrs.define(eq=False)
class _Follower:
    listener: Listener
    covered: int = -1  # the last seq of the thread's log the replay covered
    waiting: list[ClientEvent] | None = attrs.field(factory=list)  # None once live

    def deliver(self, event: ClientEvent) -> None:
        if self.waiting is not None:
            self.waiting.append(event)
        elif not (isinstance(event, REPLAYED) and event.seq <= self.covered):
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
        if isinstance(event, ModelResponse):
            self.streamed, self.streaming = self.streaming, None
        return []

    def tree_events(self, session: Session, events: Sequence[Event]) -> list[ClientEvent]:
        """``subagent/*`` events for the tree changes an append makes."""
        changes = self.tree.observe(session.id, session.header.parent_session, events)
        seq = events[-1].seq if events else 0
        return [self._tree_event(change, session.id, seq) for change in changes]

    def _tree_event(self, change: Change, session_id: str, seq: int) -> ClientEvent:
        member = change.member
        if change.joined:
            return SubagentStarted(
                self.id, session_id, seq, self.turn_id, member.id, member.parent_id,
                member.label, member.depth,
            )
        return SubagentStatus(self.id, session_id, seq, self.turn_id, member.id, change.status)


class Feed:
    """The event feed of every followed thread of one host (module docstring)."""

    def __init__(self, host: Host) -> None:
        self._host = host
        self._threads: dict[str, _Thread] = {}
        self._stop = host.services.sessions.observe(self._appended)

    def close(self) -> None:
        """Stop observing (followers hear nothing more)."""
        self._stop()
        for thread in self._threads.values():
            if thread.stream_stop is not None:
                thread.stream_stop()
        self._threads.clear()

    async def follow(
        self, thread_id: str, listener: Listener, *, after_seq: int | None
    ) -> Disposer:
        """Replay the thread's stored events after ``after_seq`` (None: none, only what comes
        next) to ``listener``, then live ones; returns the disposer that stops it. A thread
        that is neither live nor stored raises the persistence's ``NOT_FOUND``."""
        thread = self._thread(thread_id)
        follower = _Follower(listener)
        thread.followers.append(follower)
        try:
            stored = await self._stored(thread_id)
        except BaseException:
            thread.followers.remove(follower)
            raise
        replay = _Thread(thread_id, lambda _id: None).fold(stored)
        thread.fold(stored)  # before any await: an append meanwhile folds after these
        follower.covered = stored[-1].seq if stored else -1
        if stored and not thread.tree.members():
            await self._join_stored(thread)
        for event in replay:
            if after_seq is not None and isinstance(event, REPLAYED) and event.seq > after_seq:
                follower.listener(event)
        waiting, follower.waiting = follower.waiting or [], None
        for event in waiting:
            follower.deliver(event)
        self._attach_stream(thread)

        def stop() -> None:
            if follower in thread.followers:
                thread.followers.remove(follower)

        return stop

    async def _join_stored(self, thread: _Thread) -> None:
        """A thread with a history knows the subagents it had (settled until they act)."""
        service = self._host.services.find("subagents")
        if service is None:
            return
        try:
            await join_stored(thread.tree, service)
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

    async def _stored(self, session_id: str) -> Sequence[Event]:
        """The thread's events: the live session's, else the stored log's."""
        live = self._host.services.sessions.get(session_id)
        if live is not None:
            return list(live.events)
        persistence: Any = self._host.services.get("session_persistence")
        stored = await persistence.inspect(session_id)
        return list(stored.events)

    def _attach_stream(self, thread: _Thread) -> None:
        """Hear the stream of the thread's live agent (once per agent: a subagent sent more
        work after it settled is a new one)."""
        agent = self._host.services.agents.get(thread.id)
        if agent is None or agent is thread.streamer:
            return
        if thread.stream_stop is not None:
            thread.stream_stop()
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
