"""The durable inbox: how messages reach an agent (docs/subagents.md, "The inbox").

* ``followup`` — FIFO next turn; wakes an idle agent, waits for a running turn to end; each
  followup is its own turn.
* ``steer`` — wakes an idle agent, or joins a running turn at the nearest step boundary (a step
  claims the whole steer batch).
* ``inject`` — quiet: claimed at the next step, never wakes an idle agent.

Every send returns the ``MessageId`` synchronously, after ``InboxAccepted`` is in the session;
``accept_async`` does the same for code on the event loop, without blocking it while a
background writer commits: the message takes its place in the queue at once, and nothing is
claimed from it or past it until its acceptance is written (a failed write withdraws it).
A step claims its messages in acceptance order: ``InboxClaimed(ids)`` then one user message per
claimed message (same ``message_id``, same ``source``). After an interrupt the queue is *parked*:
nothing starts a turn until the next waking send (followup or steer) unparks it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol

import attrs

from host.errors import HostError
from host.sessions.model import (
    Delivery,
    Event,
    EventBody,
    InboxAccepted,
    InboxClaimed,
    MessageEvent,
    new_id,
)

MessageId = str


class EventLog(Protocol):
    """The part of a session the inbox writes to."""

    @property
    def events(self) -> Sequence[Event]:
        """Every event of the log, in ``seq`` order."""
        ...

    def append(self, body: EventBody) -> Event:
        """Append ``body``; acknowledged (durable per policy) on return."""
        ...

    def append_all(self, bodies: Sequence[EventBody]) -> list[Event]:
        """Append ``bodies`` with one write: all acknowledged on return, or none."""
        ...

    async def append_async(self, body: EventBody) -> Event:
        """``append`` without blocking the event loop while the write commits."""
        ...

    async def append_all_async(self, bodies: Sequence[EventBody]) -> list[Event]:
        """``append_all`` without blocking the event loop while the write commits."""
        ...


class InboxClosedError(HostError):
    """A send to an agent that is being disposed (code ``AGENT_CLOSED``)."""

    def __init__(self, agent_id: str) -> None:
        super().__init__("AGENT_CLOSED", f'agent "{agent_id}" is closed and accepts no messages')


@attrs.frozen
class InboxMessage:
    """An accepted, not yet claimed message."""

    message_id: MessageId
    delivery: Delivery
    content: str
    source: dict[str, Any] | None = None


class Inbox:
    """Pending messages of one agent, in acceptance order, backed by its session log."""

    def __init__(self, session: EventLog, *, owner: str = "agent") -> None:
        self._session = session
        self._owner = owner
        self._pending: list[InboxMessage] = []
        self._writing: set[MessageId] = set()  # queued by accept_async, acceptance in flight
        self._parked = False
        self._closed = False
        self._wake: Callable[[], None] = lambda: None
        self._turns: dict[MessageId, str] = {}  # followups whose turn id was handed out

    def bind(self, wake: Callable[[], None]) -> None:
        """Set the callback a waking send calls (the agent's driver)."""
        self._wake = wake

    # -- sending ---------------------------------------------------------------------------

    def accept(
        self,
        delivery: Delivery,
        content: str,
        source: dict[str, Any] | None = None,
        *,
        message_id: MessageId | None = None,
    ) -> MessageId:
        """Accept one message by ``delivery`` (``Agent.followup``/``steer``/``inject``):
        ``followup`` and ``steer`` wake an idle (or parked) agent, ``inject`` wakes no one.

        ``message_id`` keeps an id the sender already handed out (a message delivered from
        another host); by default a fresh one is made.
        """
        message = self._new(delivery, content, source, message_id)
        self._session.append(_accepted(message))
        self._pending.append(message)
        if delivery != "inject":
            self._parked = False
            self._wake()
        return message.message_id

    async def accept_async(
        self,
        delivery: Delivery,
        content: str,
        source: dict[str, Any] | None = None,
        *,
        message_id: MessageId | None = None,
    ) -> MessageId:
        """``accept`` that waits for the acceptance's commit without blocking the event loop.

        The message is queued in order at once but claimable only once its ``InboxAccepted``
        is acknowledged; then it wakes the agent as ``accept`` would. If the write fails the
        message is withdrawn and the error raised. A sender cancelled while the write was on
        its way gets ``CancelledError`` once it is settled; a written message stays queued.
        """
        message = self._new(delivery, content, source, message_id)
        self._pending.append(message)
        self._writing.add(message.message_id)
        if delivery != "inject":  # as a send does when it is made (not when it lands)
            self._parked = False
        try:
            await self._session.append_async(_accepted(message))
        except asyncio.CancelledError:
            self._settled(message, written=self._logged(message.message_id))
            raise
        except BaseException:
            self._settled(message, written=False)
            raise
        self._settled(message, written=True)
        return message.message_id

    def _new(
        self,
        delivery: Delivery,
        content: str,
        source: dict[str, Any] | None,
        message_id: MessageId | None,
    ) -> InboxMessage:
        """The message to accept (a fresh id unless one is kept); refused once closed."""
        if self._closed:
            raise InboxClosedError(self._owner)
        return InboxMessage(message_id or new_id("msg_"), delivery, content, source)

    def _logged(self, message_id: MessageId) -> bool:
        """True if the log holds the acceptance of ``message_id`` (searched from the end)."""
        return any(
            isinstance(e.body, InboxAccepted) and e.body.message_id == message_id
            for e in reversed(self._session.events)
        )

    def _settled(self, message: InboxMessage, *, written: bool) -> None:
        """``message``'s acceptance is written (it becomes claimable) or not (withdrawn)."""
        self._writing.discard(message.message_id)
        if not written and message in self._pending:
            self._pending.remove(message)
        self._wake()  # also for messages queued behind it meanwhile

    # -- the driver's side -----------------------------------------------------------------

    @property
    def parked(self) -> bool:
        """True after an interrupt until the next waking send."""
        return self._parked

    def pending(self) -> tuple[InboxMessage, ...]:
        """Accepted, unclaimed messages in acceptance order."""
        return tuple(self._pending)

    def park(self) -> None:
        """Hold queued messages: no turn starts until the next followup or steer."""
        self._parked = True

    def close(self) -> None:
        """Refuse every later send (the agent is being disposed)."""
        self._closed = True

    def turn_ready(self) -> bool:
        """True if a new turn should start: a followup or steer waits and the queue is unparked."""
        return not self._parked and any(m.delivery != "inject" for m in self._claimable())

    def has_steers(self) -> bool:
        """True if a steer waits to join the running turn."""
        return any(m.delivery == "steer" for m in self._claimable())

    def _claimable(self) -> Iterator[InboxMessage]:
        """The queued messages up to the first whose acceptance is still being written."""
        for message in self._pending:
            if message.message_id in self._writing:
                return
            yield message

    def reserve_turn(self, message_id: MessageId) -> str:
        """The id of the turn that will claim the queued followup ``message_id`` (minted
        now, so a front end can name the turn before it starts)."""
        return self._turns.setdefault(message_id, new_id("turn_"))

    def next_turn_id(self) -> str:
        """The id for a turn starting now: the one reserved for the oldest claimable
        followup (the one its first step claims), else a new one."""
        for message in self._claimable():
            if message.delivery == "followup":
                return self._turns.pop(message.message_id, None) or new_id("turn_")
        return new_id("turn_")

    def take(self, *, turn_start: bool) -> list[InboxMessage]:
        """Remove what a step claims: steers and injects, plus the oldest followup at turn start
        (only among claimable messages: ``accept_async``)."""
        taken: list[InboxMessage] = []
        kept: list[InboxMessage] = []
        followup_taken = not turn_start
        claimable = True
        for message in self._pending:
            claimable = claimable and message.message_id not in self._writing
            if not claimable or (message.delivery == "followup" and followup_taken):
                kept.append(message)
                continue
            followup_taken = followup_taken or message.delivery == "followup"
            taken.append(message)
        self._pending = kept
        return taken

    async def claim(self, messages: Sequence[InboxMessage]) -> None:
        """Write ``InboxClaimed`` and the user messages for ``messages`` (nothing if empty)."""
        if not messages:
            return
        claimed: list[EventBody] = [InboxClaimed(tuple(m.message_id for m in messages))]
        claimed += [
            MessageEvent(
                role="user",
                content=message.content,
                message_id=message.message_id,
                source=message.source,
            )
            for message in messages
        ]
        # one write: a crash cannot claim without the message
        await self._session.append_all_async(claimed)

    def discard(self) -> list[InboxMessage]:
        """Drop every queued message durably (marked claimed, never delivered); return them."""
        dropped, self._pending = self._pending, []
        self._turns.clear()
        if dropped:
            self._session.append(InboxClaimed(tuple(m.message_id for m in dropped)))
        return dropped

    def replay(self, events: Iterable[Event]) -> list[InboxMessage]:
        """Queue every message the log accepted but never claimed (a resumed agent's backlog)."""
        accepted: dict[str, InboxMessage] = {}
        for event in events:
            body = event.body
            if isinstance(body, InboxAccepted):
                accepted[body.message_id] = InboxMessage(
                    body.message_id, body.delivery, body.content, body.source
                )
            elif isinstance(body, InboxClaimed):
                for message_id in body.message_ids:
                    accepted.pop(message_id, None)
        known = {m.message_id for m in self._pending}
        backlog = [m for m in accepted.values() if m.message_id not in known]
        self._pending.extend(backlog)
        return backlog


def _accepted(message: InboxMessage) -> InboxAccepted:
    """The event that records ``message``'s acceptance."""
    return InboxAccepted(message.message_id, message.delivery, message.content, message.source)
