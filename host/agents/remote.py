"""Receiving messages that other hosts queued for the agents live here.

Only backends shared by several hosts implement ``host.sessions.remote.RemoteInbox``; with
JSONL there is nothing to receive. The agent registry starts receiving when its first agent
goes live. The backend wakes the receiver when messages may be waiting (a notification, or a
periodic poll); one pass at a time accepts each message into the inbox of the live agent it is
for, keeping the id its sender already handed out (the backend drops the queued copy in the
same write, so it is delivered once). A message whose target no host holds any more (an
orphan, only ever shown to the host that sent it) goes to the orphan handler (``on_orphan``:
the subagent service resumes the target there) or waits for the next host that resumes it.
A message for a resident subagent goes through the resident handler (``on_resident``) first,
which applies the subagent service's admission rules (a child closing or draining refuses it
for now).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

from host.agents.inbox import InboxClosedError
from host.disposal import Disposer
from host.errors import HostError
from host.sessions.remote import RemoteInbox, RemoteMessage

if TYPE_CHECKING:
    from host.agents.agent import Agent

log = logging.getLogger(__name__)

OrphanHandler = Callable[[RemoteMessage], Awaitable[None]]
ResidentHandler = Callable[[RemoteMessage], bool | None]


class LiveAgents(Protocol):
    """The receiver's view of the agent registry (``AgentRegistry``) that owns it."""

    def get(self, agent_id: str) -> Agent | None:
        """The live agent with this id, or None."""


class RemoteReceiver:
    """Delivers queued messages to the live agents of one registry (module docstring)."""

    def __init__(self, agents: LiveAgents, inbox: RemoteInbox) -> None:
        self.agents = agents
        self.inbox = inbox
        self._orphans: OrphanHandler | None = None
        self._residents: ResidentHandler | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: Callable[[], None] | None = None
        self._closed = False
        self._pass: asyncio.Task[None] | None = None
        self._again = False

    def on_orphan(self, handler: OrphanHandler) -> Disposer:
        """Give orphans to ``handler`` (it replaces any earlier one) until the disposer runs."""
        self._orphans = handler

        def stop() -> None:
            if self._orphans is handler:
                self._orphans = None

        return stop

    def on_resident(self, handler: ResidentHandler) -> Disposer:
        """Offer each message to ``handler`` first (it replaces any earlier one; None from it:
        not a resident child's) until the disposer runs."""
        self._residents = handler

        def stop() -> None:
            if self._residents is handler:
                self._residents = None

        return stop

    def ensure_started(self) -> None:
        """Start receiving (once, from inside the event loop); a no-op after ``close``."""
        if self._stop is not None or self._closed:
            return
        self._loop = asyncio.get_running_loop()
        self._stop = self.inbox.watch(self._wake_from_thread)

    def _wake_from_thread(self) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        try:
            loop.call_soon_threadsafe(self.wake)
        except RuntimeError:  # the loop closed meanwhile
            return

    def wake(self) -> None:
        """Run a delivery pass now, or right after the one under way."""
        if self._closed:
            return
        if self._pass is not None and not self._pass.done():
            self._again = True
            return
        self._pass = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        again = True
        while again and not self._closed:
            self._again = False
            try:
                messages = await self.inbox.pending_remote()
            except HostError as error:
                log.warning("reading cross-host messages failed: %s", error.message)
                return
            for message in messages:
                try:
                    await self._deliver(message)
                except (HostError, InboxClosedError) as error:
                    log.info("message %s not delivered yet: %s", message.message_id, error)
            again = self._again

    async def _deliver(self, message: RemoteMessage) -> None:
        if message.orphan:
            if self._orphans is not None:
                await self._orphans(message)
            return
        if self._residents is not None and self._residents(message) is not None:
            return  # a resident child took it, or refused it for now (it stays queued)
        agent = self.agents.get(message.session_id)
        if agent is None or agent.closed:
            return  # held here but not live (being loaded or released): a later pass
        await agent.inbox.accept_async(
            message.delivery, message.content, message.source, message_id=message.message_id
        )

    def close(self) -> None:
        """Stop receiving (blocks until the backend's watcher stopped); idempotent."""
        self._closed = True
        stop, self._stop = self._stop, None
        if stop is not None:
            stop()
