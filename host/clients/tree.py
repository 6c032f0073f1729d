"""The subagent tree of a root, as this host sees it, kept from appends (the clients layer's
one record of it: the terminal client's status line and the app-server's ``subagent/*``
notifications both come from here).

``Tree.observe`` is given every append of the host's live sessions (``SessionStore.observe``);
a session whose header names a member as its parent joins the tree. Lifecycle events move
members between ``running`` and ``idle`` (a turn starts or ends), a request to the user that
one of them made (mirrored into the root's log) makes it ``waiting`` until it is decided, and
a ``subagent-settled`` notice to the parent marks one settled (done, unless sent more). The
status line is rendered from that record on demand, so it changes only when a lifecycle event
changed the tree: nothing polls.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

import attrs

from host.sessions.model import (
    ApprovalDecided,
    ApprovalRequested,
    Event,
    InboxAccepted,
    TurnEnd,
    TurnStart,
)

MemberStatus = Literal["running", "idle", "waiting", "settled"]
SETTLED = "subagent-settled"


@attrs.define
class Member:
    """One subagent below the root: where it hangs, what it is doing, when it last acted."""

    id: str
    parent_id: str
    depth: int
    label: str | None = None
    status: MemberStatus = "idle"
    last_active: float = 0.0

    @property
    def name(self) -> str:
        """The label when there is one, else the id."""
        return self.label or self.id


@attrs.frozen
class Change:
    """A member that joined the tree (``joined``) or whose status changed, and its status
    then (one append may change it twice: a turn that starts and ends)."""

    member: Member
    status: MemberStatus
    joined: bool = False

    @classmethod
    def of(cls, member: Member, *, joined: bool = False) -> Change:
        """The change ``member`` just went through."""
        return cls(member, member.status, joined)


class Tree:
    """The root's descendants seen in this process, in the order they appeared.

    ``label_of`` names a live agent (its label) the first time its session is seen.
    """

    def __init__(
        self,
        root_id: str,
        label_of: Callable[[str], str | None] = lambda _id: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.root_id = root_id
        self._label_of = label_of
        self._clock = clock
        self._members: dict[str, Member] = {}
        self._asking: dict[str, str] = {}  # open request id -> the member that asked

    def members(self) -> list[Member]:
        """Every member, parents before their children (pre-order, in order of appearance)."""
        children: dict[str, list[Member]] = {}
        for member in self._members.values():
            children.setdefault(member.parent_id, []).append(member)
        ordered: list[Member] = []

        def visit(parent_id: str) -> None:
            for child in children.get(parent_id, ()):
                ordered.append(child)
                visit(child.id)

        visit(self.root_id)
        return ordered

    def get(self, agent_id: str) -> Member | None:
        """The member with this id, or None."""
        return self._members.get(agent_id)

    def join(
        self,
        session_id: str,
        parent_id: str | None,
        *,
        label: str | None = None,
        status: MemberStatus = "idle",
    ) -> Member | None:
        """Make ``session_id`` a member when its parent is the root or a member; the member
        (new or known), or None for a session outside the tree. A new member's label is
        ``label``, else asked of ``label_of``."""
        known = self._members.get(session_id)
        if known is not None or session_id == self.root_id:
            return known
        if parent_id == self.root_id:
            depth = 1
        elif parent_id is not None and parent_id in self._members:
            depth = self._members[parent_id].depth + 1
        else:
            return None
        member = Member(session_id, parent_id, depth, label or self._label_of(session_id), status)
        member.last_active = self._clock()
        self._members[session_id] = member
        return member

    def observe(
        self, session_id: str, parent_id: str | None, events: Sequence[Event]
    ) -> list[Change]:
        """Fold one append; the members whose lifecycle it changed (joined, started, stopped,
        waiting on the user, settled), in order: the status line needs drawing again when
        there is any."""
        changes: list[Change] = []
        joined = session_id not in self._members
        member = self.join(session_id, parent_id)
        if member is not None:
            if joined:
                changes.append(Change.of(member, joined=True))
            member.last_active = self._clock()
            if member.label is None:
                member.label = self._label_of(session_id)
            for event in events:
                if self._lifecycle(member, event):
                    changes.append(Change.of(member))
        if session_id == self.root_id:
            changes.extend(self._requests(events))
        for sender in _settled_senders(events):
            ended = self._members.get(sender)
            if ended is not None and ended.status != "settled":
                ended.status = "settled"
                changes.append(Change.of(ended))
        return changes

    def _lifecycle(self, member: Member, event: Event) -> bool:
        if isinstance(event.body, TurnStart) and member.status != "running":
            member.status = "running"
            return True
        if isinstance(event.body, TurnEnd) and member.status in ("running", "waiting"):
            member.status = "idle"
            return True
        return False

    def _requests(self, events: Sequence[Event]) -> list[Change]:
        """Members waiting on the user: requests the root's log mirrors, until decided."""
        changes = []
        for event in events:
            body = event.body
            if isinstance(body, ApprovalRequested):
                asker = self._members.get(body.origin.agent_id)
                if asker is not None and asker.status != "settled":
                    self._asking[body.request_id] = asker.id
                    asker.status = "waiting"
                    changes.append(Change.of(asker))
            elif isinstance(body, ApprovalDecided) and body.request_id in self._asking:
                asker = self._members[self._asking.pop(body.request_id)]
                if asker.status == "waiting" and asker.id not in self._asking.values():
                    asker.status = "running"
                    changes.append(Change.of(asker))
        return changes

    def status_line(self, width: int | None = None) -> str:
        """``subagents: 2 running (research 4s, tests 1s) · 1 idle · 3 settled`` (the seconds
        since each running one last acted), cut to ``width``; empty without subagents."""
        members = self.members()
        if not members:
            return ""
        now = self._clock()
        running = [m for m in members if m.status == "running"]
        parts = []
        if running:
            busy = ", ".join(f"{m.name} {_ago(now - m.last_active)}" for m in running)
            parts.append(f"{len(running)} running ({busy})")
        for status in ("waiting", "idle", "settled"):
            count = sum(1 for m in members if m.status == status)
            if count:
                parts.append(f"{count} {status}")
        return _cut("subagents: " + " · ".join(parts), width)


async def join_stored(
    tree: Tree, service: Any, live: Callable[[str], str | None] = lambda _id: None
) -> None:
    """The subagents the tree's root had (before this process, or before anyone followed
    it) join it: ``running`` when ``live`` (the agent registry's ``status``) says so, else
    settled, so they are known before they act again (``service``: the subagent
    service; its ``HostError`` passes through)."""
    for entry in await service.list_descendants(tree.root_id):
        if entry.kind == "child":
            known: MemberStatus = "running" if live(entry.id) == "running" else "settled"
            tree.join(entry.id, entry.parent_id, label=entry.label, status=known)


def _settled_senders(events: Iterable[Event]) -> list[str]:
    """The children whose settlement notices these events carry."""
    senders = []
    for event in events:
        body = event.body
        if not isinstance(body, InboxAccepted) or not body.source:
            continue
        if body.source.get("kind") == SETTLED:
            senders.append(str(body.source.get("sender_session_id")))
    return senders


def _ago(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    return f"{seconds // 3600}h"


def _cut(text: str, width: int | None) -> str:
    if width is None or len(text) <= width:
        return text
    return text[: max(0, width - 1)] + "…"
