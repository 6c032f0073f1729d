"""``read_agent_messages``: the reports and settlement notices addressed to the root.

A background subagent's ``report`` and its settlement notice reach its parent as inbox
messages (docs/subagents.md texts); the root's log holds them, in order, as transcript items
(``host.clients.items``: ``subagentReport``, ``subagentSettled``). A read returns those after
the cursor ``after`` (the ``seq`` of the last log event a previous read covered) and the next
cursor; ``wait_seconds`` > 0 waits for the first one to be appended when none is new (woken
by the append itself, ``SessionStore.observe``). A read writes nothing: the same cursor reads
the same messages again.
"""

from __future__ import annotations

import asyncio
import bisect
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from host.api import NOTICES, Event, InboxAccepted, items_of, validate

if TYPE_CHECKING:
    from host.api import Agent, Session, SessionStore

NAME = "read_agent_messages"
MAX_WAIT = 60
KINDS = {"subagentReport": "report", "subagentSettled": "settled"}

DESCRIPTION = (
    "Read the reports and settlement notices your background subagents sent you, oldest "
    "first: those after the cursor `after` (the `next` of your previous read; omit it to "
    "read from the start). With `wait_seconds` above 0, wait up to that many seconds for one "
    "to arrive when none is new. A background subagent reports while it works and sends one "
    "notice when it settles; reading writes nothing, so reading again with the same cursor "
    "returns the same messages."
)
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "after": {
            "type": "string",
            "description": "the `next` cursor of your previous read (omit: from the start)",
        },
        "wait_seconds": {
            "type": "number",
            "minimum": 0,
            "maximum": MAX_WAIT,
            "description": "how long to wait for a message when none is new (default 0)",
        },
    },
    "additionalProperties": False,
}
OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "messages": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "subagent_id": {"type": "string"},
                    "kind": {"enum": ["report", "settled"]},
                    "text": {"type": "string"},
                    "seq": {"type": "integer"},
                },
                "required": ["subagent_id", "kind", "text", "seq"],
            },
        },
        "next": {"type": "string"},
    },
    "required": ["messages", "next"],
}
NONE_NEW = "no new messages"


class BadRead(ValueError):
    """Arguments ``read_agent_messages`` cannot use (its message is the one line to show)."""


def parse(raw: Any) -> tuple[int, float]:
    """The cursor (``seq``; -1 for the start, also the ``next`` of a read of an empty log)
    and the wait of raw arguments; ``BadRead``."""
    problems = validate(SCHEMA, raw) if isinstance(raw, dict) else ["expected an object"]
    if problems:
        raise BadRead(f"invalid arguments for {NAME}: {'; '.join(problems)}")
    after, wait = raw.get("after"), float(raw.get("wait_seconds", 0))
    if not 0 <= wait <= MAX_WAIT:  # also NaN
        raise BadRead(f"invalid arguments for {NAME}: wait_seconds: must be from 0 to {MAX_WAIT}")
    digits = after.removeprefix("-") if after == "-1" else after  # a fresh root's cursor
    if digits is not None and not (digits.isascii() and digits.isdigit() and len(digits) < 19):
        raise BadRead(_not_a_cursor(after))
    return (int(after) if after is not None else -1), wait


def _not_a_cursor(after: object) -> str:
    return f"invalid arguments for {NAME}: after: {after!r} is not a cursor {NAME} returned"


class Mailbox:
    """The notices of one root's log, and the reads waiting for the next one."""

    def __init__(self, root: Agent, store: SessionStore) -> None:
        self._root = root
        self._waiting: set[asyncio.Future[None]] = set()
        self._stop = store.observe(self._appended)

    def close(self) -> None:
        """Stop hearing appends."""
        self._stop()

    async def read(self, after: int, wait_seconds: float) -> dict[str, Any]:
        """``{"messages": [...], "next": cursor}`` after ``after``, waiting up to
        ``wait_seconds`` for one when none is new."""
        found = self.now(after)
        if int(found["next"]) > self._last():
            raise BadRead(_not_a_cursor(str(after)))
        if found["messages"] or wait_seconds <= 0:
            return found
        arrived = asyncio.get_running_loop().create_future()
        self._waiting.add(arrived)
        try:
            found = self.now(after)  # nothing may arrive between the read and the wait
            if not found["messages"]:
                await asyncio.wait_for(asyncio.shield(arrived), wait_seconds)
                found = self.now(after)
        except TimeoutError:
            pass
        finally:
            self._waiting.discard(arrived)
        return found

    def now(self, after: int) -> dict[str, Any]:
        """The notices after ``after`` in the log as it is."""
        events = self._root.session.events
        start = bisect.bisect_right(events, after, key=lambda event: event.seq)  # seq order
        messages = [
            {"subagent_id": item.subagent_id or "", "kind": KINDS[item.type],
             "text": item.text or "", "seq": item.seq}
            for event in events[start:]
            if _notice(event)
            for item in items_of(event, self._root.id)
            if item.type in KINDS
        ]
        return {"messages": messages, "next": str(max(after, self._last()))}

    def _last(self) -> int:
        events = self._root.session.events
        return events[-1].seq if events else -1

    def _appended(self, session: Session, events: Sequence[Event]) -> None:
        if session.id != self._root.id or not any(_notice(event) for event in events):
            return
        for arrived in self._waiting:
            if not arrived.done():
                arrived.set_result(None)


def _notice(event: Event) -> bool:
    body = event.body
    return isinstance(body, InboxAccepted) and str((body.source or {}).get("kind")) in NOTICES


def text_of(read: dict[str, Any]) -> str:
    """What the client's model reads: each message's text, then the next cursor."""
    texts = [message["text"] for message in read["messages"]] or [NONE_NEW]
    return "\n\n".join(texts) + f"\n\n(next cursor: {read['next']})"
