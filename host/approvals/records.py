"""What the logs say about approval requests: who asks (``origin_of``), and which requests of
a log still wait for a decision and which tools it approved for good (``LogRequests``).

A request is an ``ApprovalRequested`` event in the requesting agent's log, mirrored into its
root's; it ends with one ``ApprovalDecided`` in both. A request with no decision in a log is
still waiting: asked now, or — after a restart — until its agent is resumed and asks it again
(``host.approvals.resume``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from host.sessions.model import (
    ApprovalDecided,
    ApprovalOrigin,
    ApprovalRequested,
    Event,
    InboxAccepted,
)

if TYPE_CHECKING:
    from host.agents.agent import Agent


def origin_of(agent: Agent) -> ApprovalOrigin:
    """``agent`` as the origin of a request: id, session, depth, label, and the parent's tool
    call that started it (read from the start message's source)."""
    header = agent.session.header
    call_id: str | None = None
    if header.parent_session is not None:
        for event in agent.session.events:
            body = event.body
            if isinstance(body, InboxAccepted) and body.source is not None:
                found = body.source.get("tool_call_id")
                call_id = found if isinstance(found, str) else None
                break
    return ApprovalOrigin(agent.id, header.id, header.delegation_depth, agent.label, call_id)


class LogRequests:
    """The requests of one log, folded incrementally (``update`` reads only new events):
    every request id seen, the requests without a decision (oldest first), and the tools the
    log's decisions approved for the rest of its session."""

    def __init__(self) -> None:
        self._seen = 0
        self.requested: set[str] = set()
        self.undecided: dict[str, ApprovalRequested] = {}
        self.approved_tools: set[str] = set()

    def update(self, events: Sequence[Event]) -> LogRequests:
        """Fold the events appended since the last update; returns itself."""
        for index in range(self._seen, len(events)):
            body = events[index].body
            if isinstance(body, ApprovalRequested):
                if body.request_id not in self.requested:
                    self.requested.add(body.request_id)
                    self.undecided[body.request_id] = body
            elif isinstance(body, ApprovalDecided):
                decided = self.undecided.pop(body.request_id, None)
                if decided is not None and body.decision == "approved_for_session":
                    self.approved_tools.add(decided.tool)
        self._seen = len(events)
        return self
