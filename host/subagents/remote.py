"""Subagent messages between hosts (backends shared by several hosts; none with JSONL).

* **Sending** — a followup for a child that another host holds (its lease is live there), or
  a report for a parent live on another host, is queued durably with a message id made here;
  that id is what the sender gets back, and the id the message carries in the target's log
  once that host accepts it (``host.agents.remote``). Authorization happened before, against
  the durable header, exactly as for a local send; the sender session's voice is checked in
  the statement that queues it (``host.subagents.voices``).
* **Orphans** — a queued followup whose target nobody holds any more (its holder released it
  before accepting) is delivered by the host that sent it: the target is resumed there as an
  ordinary followup from its still-live parent, under the id already handed out. With no live
  sender it waits for the next host that resumes the target. A queued *report* whose parent
  nobody holds any more waits the same way: it is delivered when the parent is resumed.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from host.agents.inbox import MessageId
from host.errors import HostError, log_failure
from host.sessions.model import Delivery, new_id
from host.sessions.persistence import PersistenceError, Voice
from host.sessions.remote import QUEUED_PREFIX, RemoteInbox, RemoteMessage
from host.subagents import texts
from host.subagents.residency import settlement

if TYPE_CHECKING:
    from host.agents.agent import Agent
    from host.subagents.child_activation import ChildActivation
    from host.subagents.manager import ContinuationManager

log = logging.getLogger(__name__)

MAX_RETRY_DELAY = 60.0


class RemoteSender:
    """Queues subagent messages for other hosts; resumes its own orphans."""

    def __init__(self, manager: ContinuationManager, inbox: RemoteInbox) -> None:
        self._manager = manager
        self._inbox = inbox
        self._backoff: dict[str, tuple[float, float]] = {}  # message id → (retry at, delay)
        self._dropped: dict[str, float] = {}  # message id → last seen: its sender was fenced

    async def send(
        self,
        session_id: str,
        delivery: Delivery,
        content: str,
        source: dict[str, Any] | None,
        sender: tuple[str, Voice | None],
    ) -> MessageId | None:
        """Queue for the host holding ``session_id``: the message id, or None if none does.

        ``sender`` is the session the message is sent on behalf of and its voice, which the
        backend checks as it queues (``texts.sender_fenced`` when it no longer holds)."""
        sender_session, voice = sender
        message = RemoteMessage(
            new_id(QUEUED_PREFIX), session_id, delivery, content, source, sender_session
        )
        try:
            queued = await self._inbox.send_remote(message, voice)
        except PersistenceError as error:
            if voice is not None and error.code == PersistenceError.LOCKED:
                raise texts.sender_fenced(voice.session_id) from error
            raise
        return message.message_id if queued else None

    async def notify_settled(self, activation: ChildActivation) -> None:
        """Queue ``activation``'s settlement notice for its parent on another host: a steer
        while the parent's lease says it is running, else a followup (as for a local parent).
        A failure is logged; settling goes on."""
        parent_id = activation.parent_id
        if parent_id is None:
            return
        text, source = settlement(activation)
        try:
            statuses = await self._inbox.residency([parent_id])
            delivery: Delivery = "steer" if statuses.get(parent_id) == "running" else "followup"
            await self.send(parent_id, delivery, text, source, (activation.id, activation.voice))
        except HostError:
            log_failure(log, "settlement notice of subagent %s not sent", activation.id)

    async def deliver_orphan(self, message: RemoteMessage) -> None:
        """Resume an orphan's target here and give it the message (see module docstring).

        A failing attempt (say the target cannot be resumed) is retried with a growing delay
        (1 s doubling up to a minute) rather than at every poll. Once another host took the
        sender over (its voice no longer holds) the message is this host's no more: one log
        line, and it waits for whoever resumes its target.
        """
        now = time.monotonic()
        self._forget_stale(now)
        manager = self._manager
        sender = message.sender_session
        parent = manager.agents.get(sender) if sender is not None else None
        if parent is None or parent.closed or message.delivery != "followup":
            return
        retry_at, delay = self._backoff.get(message.message_id, (now, 0.5))
        if now < retry_at or self._is_dropped(message.message_id, now):
            return
        try:
            if await self._fenced(parent, message.message_id, now):
                return
            await manager.followup(
                parent,
                message.session_id,
                message.content,
                source=message.source,
                signal=None,
                message_id=message.message_id,
            )
        except Exception:
            delay = min(delay * 2, MAX_RETRY_DELAY)
            self._backoff[message.message_id] = (time.monotonic() + delay, delay)
            raise
        self._backoff.pop(message.message_id, None)

    async def _fenced(self, sender: Agent, message_id: str, now: float) -> bool:
        """Whether another host took ``sender`` over: then ``message_id`` is dropped here
        (one log line). ``PersistenceError`` when that cannot be read."""
        voice = sender.session.voice()
        if voice is None or await voice.holds():
            return False
        error = texts.sender_fenced(voice.session_id)
        log.warning("queued message %s not delivered: %s (LOCKED)", message_id, error.message)
        self._dropped[message_id] = now
        self._backoff.pop(message_id, None)
        return True

    def _forget_stale(self, now: float) -> None:
        """Drop the delays of messages no pass has come back to for two maximal delays.

        Orphans are seen at every pass (at least once a second), so such a message is no longer
        queued: another host delivered it, or its target was resumed elsewhere. The same for
        the messages dropped.
        """
        horizon = now - 2 * MAX_RETRY_DELAY
        for message_id in [m for m, (retry_at, _) in self._backoff.items() if retry_at < horizon]:
            del self._backoff[message_id]
        for message_id in [m for m, seen in self._dropped.items() if seen < horizon]:
            del self._dropped[message_id]

    def _is_dropped(self, message_id: str, now: float) -> bool:
        """Whether ``message_id`` was dropped (its sender fenced); seen again at ``now``."""
        if message_id not in self._dropped:
            return False
        self._dropped[message_id] = now
        return True
