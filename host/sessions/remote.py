"""Messages between hosts: what a backend shared by several hosts offers for delivery.

A backend that several hosts share (PostgreSQL) is a ``SharedPersistence``: next to the
session store it offers an ``inbox`` (``RemoteInbox``), a separate object. A message for a
session that another host holds is queued durably (``send``) and wakes that host (``watch``);
the holder accepts it into the session's inbox with the same ``message_id``, and the backend
drops it from the queue in the same write that appends the acceptance, so it is delivered
exactly once. A message sent on behalf of a session is fenced by that session's ``Voice`` in
the statement that queues it. Single-host backends (JSONL) have no inbox.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import attrs

from host.cancel import CancelSignal
from host.sessions.model import Delivery
from host.sessions.persistence import SessionPersistence, Voice

QUEUED_PREFIX = "rmsg_"
"""Every queued message's id starts with it (local messages' ids start with ``msg_``), so a
backend can tell which accepted messages must leave its queue in the same write."""


@attrs.frozen
class RemoteMessage:
    """A queued message: for ``session_id``, sent from ``sender_session`` on some host.

    ``orphan`` is true when no host holds the target any more (only the sending host is told
    about those, so that it can resume the target itself).
    """

    message_id: str
    session_id: str
    delivery: Delivery
    content: str
    source: dict[str, Any] | None
    sender_session: str | None
    orphan: bool = False


@runtime_checkable
class RemoteInbox(Protocol):
    """Queue messages for sessions other hosts hold; find the ones this host must deliver."""

    async def send_remote(self, message: RemoteMessage, voice: Voice | None) -> bool:
        """Queue ``message`` if another host holds a live lease on its session.

        True once the message is durably queued and its holder woken; False (nothing queued)
        when no other host holds the session, so the caller can deliver it itself.
        ``voice`` is the sender session's (``message.sender_session``): the statement that
        queues the message checks it, and a sender another host took over since queues
        nothing (``PersistenceError.fenced``, ``LOCKED``). None: sent on behalf of no session.
        """
        ...

    async def residency(
        self, session_ids: Sequence[str], *, signal: CancelSignal | None = None
    ) -> dict[str, str]:
        """``running``/``idle`` of each given session that some host holds a live lease on
        (sessions nobody holds are absent)."""
        ...

    async def pending_remote(self) -> list[RemoteMessage]:
        """Queued messages this host must deliver, oldest first: those for sessions it holds,
        and orphans it sent (whose target nobody holds any more)."""
        ...

    def watch(self, wake: Callable[[], None]) -> Callable[[], None]:
        """Call ``wake()`` (from another thread) whenever messages for this host may be
        waiting, and periodically in case a wake-up was missed; returns ``stop``."""
        ...


@runtime_checkable
class SharedPersistence(SessionPersistence, Protocol):
    """A session store several hosts share, with the inbox for messages between them."""

    @property
    def inbox(self) -> RemoteInbox:
        """Where messages for sessions other hosts hold are queued (``RemoteInbox``)."""
        ...
