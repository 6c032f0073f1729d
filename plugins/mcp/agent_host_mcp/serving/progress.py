"""Progress of a foreground ``subagent`` call: the child's streamed text and tool calls.

While the call runs, appends to the sessions of children of the root that appear during it
(``SessionStore.observe``) become ``notifications/progress`` messages: each tool call the
child makes (``calling <tool>``) and each text it finishes; and, while the child is live,
its text as it arrives (``Agent.on_stream``: streamed deltas, or a whole answer from a model
that does not stream; a finished text is not sent again). Nothing is sent when the client gave
no ``progressToken`` (the SDK's ``report_progress`` is then a no-op).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from host.api import ModelResponse, TextDelta, items_of

if TYPE_CHECKING:
    from host.api import Agent, AgentRegistry, Disposer, Event, Session, SessionStore

Report = Callable[[float, str], Awaitable[None]]
"""``report(progress, message)``: one progress notification."""


class Progress:
    """The progress of one foreground call (module docstring); ``close`` ends it."""

    def __init__(
        self, root: Agent, store: SessionStore, agents: AgentRegistry, report: Report
    ) -> None:
        self._root = root
        self._agents = agents
        self._report = report
        self._known = {s.id for s in store.list()}
        self._children: set[str] = set()
        self._streaming: set[str] = set()
        self._streams: list[Disposer] = []
        self._queue: asyncio.Queue[str] = asyncio.Queue()
        self._count = 0
        self._deltas = False  # the model call under way streamed text
        self._sender = asyncio.get_running_loop().create_task(self._send())
        self._stop = store.observe(self._appended)

    async def close(self) -> None:
        """Stop listening, send what is queued, and end."""
        self._stop()
        for stop in self._streams:
            stop()
        self._queue.put_nowait("")
        await self._sender

    def _appended(self, session: Session, events: Sequence[Event]) -> None:
        if session.id not in self._children:
            if session.header.parent_session != self._root.id or session.id in self._known:
                return
            self._children.add(session.id)
        streamed = self._listen(session.id)
        for event in events:
            for item in items_of(event, session.id):
                if item.type == "toolCall":
                    self._queue.put_nowait(f"calling {item.name}")
                elif item.type == "agentMessage" and item.text and not streamed:
                    self._queue.put_nowait(item.text)

    def _listen(self, child_id: str) -> bool:
        """Hear the child's stream once it is live; whether it is heard."""
        if child_id in self._streaming:
            return True
        agent = self._agents.get(child_id)
        if agent is None:
            return False
        self._streaming.add(child_id)
        self._streams.append(agent.on_stream(self._streamed))
        return True

    def _streamed(self, event: Any) -> None:
        """A delta's text; a whole answer's when its model did not stream it."""
        if isinstance(event, TextDelta) and event.text:
            self._deltas = True
            self._queue.put_nowait(event.text)
        elif isinstance(event, ModelResponse):
            if event.text and not self._deltas:
                self._queue.put_nowait(event.text)
            self._deltas = False

    async def _send(self) -> None:
        while message := await self._queue.get():
            self._count += 1
            try:
                await self._report(self._count, message)
            except Exception:  # the client is gone: the call ends on its own
                return
