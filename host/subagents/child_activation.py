"""ChildActivation: one resident continuable child and what the continuation manager knows.

(The error codes call it an activation, ``ACTIVATION_*``: docs/subagents.md; "Child" keeps it
apart from a plugin's activation.)

A ChildActivation exists from the moment a continuable child is materialized (fresh creation or
cold resume) until it is settled or released. It records its **materialization-time
ancestry**: the live agents above the child when it was materialized (nearest first), which
is the lineage ``interrupt`` authorizes against.

Its residency state (``ChildActivation.residency``, a ``ResidencyState``):

* ``running`` — a turn runs (or the child is about to decide whether to settle);
* ``waiting`` — quiescent but still resident: it owns resident children, or its inbox holds
  messages parked by an interrupt until the next waking send;
* ``closing`` — settling or being released (operations get ``ACTIVATION_CLOSING``);
* ``settled`` — final checkpoint written, agent disposed; the ChildActivation is gone.
"""

from __future__ import annotations

import asyncio
from typing import Final, Literal

from host.agents.agent import Agent
from host.agents.driver import TurnOutcome
from host.disposal import Disposer
from host.subagents.descriptors import ContinuableDescriptor

ResidencyState = Literal["running", "waiting", "closing", "settled"]
"""Where a resident child stands (module docstring); ``Residency`` is what holds them all."""
Phase = Literal["resident", "closing", "settled"]


class ChildActivation:
    """One resident continuable child (see the module docstring)."""

    def __init__(
        self,
        agent: Agent,
        descriptor: ContinuableDescriptor,
        ancestors: tuple[Agent, ...],
        *,
        resumed: bool,
    ) -> None:
        self.agent = agent
        self.id: Final[str] = agent.id
        """The child's id (= its session id)."""
        self.parent_id: Final[str | None] = agent.session.header.parent_session
        """The durable direct parent (the child's header ``parent_session``)."""
        self.descriptor = descriptor
        self.ancestors = ancestors
        self.ancestor_ids: Final[tuple[str, ...]] = tuple(ancestor.id for ancestor in ancestors)
        """The ids of the materialization-time ancestry, nearest first."""
        self.resumed = resumed
        self.phase: Phase = "resident"
        self.children: set[str] = set()
        self.admissions = 0
        self.turns = 0
        self.last: TurnOutcome | None = None
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.unlisten: Disposer = lambda: None
        self.check: asyncio.Task[None] | None = None
        # Taken while the child's writer is open: its settlement notice is sent after release.
        self.voice = agent.session.voice()

    def __repr__(self) -> str:
        return f"ChildActivation({self.id!r}, residency={self.residency!r})"

    @property
    def closing(self) -> bool:
        """True once settling or releasing has begun."""
        return self.phase != "resident"

    @property
    def residency(self) -> ResidencyState:
        """``running`` / ``waiting`` / ``closing`` / ``settled`` (module docstring)."""
        if self.phase == "closing":
            return "closing"
        if self.phase == "settled":
            return "settled"
        if self.agent.status == "running":
            return "running"
        if self.children or self.agent.inbox.pending():
            return "waiting"
        return "running"

    def has_turn_work(self) -> bool:
        """True while the inbox holds a followup or steer (parked or not)."""
        return any(m.delivery != "inject" for m in self.agent.inbox.pending())

    async def wait_done(self) -> None:
        """Return once the ChildActivation is settled or released."""
        await asyncio.shield(self.done)

    def mark_done(self) -> None:
        """Record that the ChildActivation is gone (settled or released)."""
        self.phase = "settled"
        if not self.done.done():
            self.done.set_result(None)
