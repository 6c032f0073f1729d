"""Residency: the ChildActivations over one agent registry, admission, settlement and drain.

``Residency`` owns continuable children's ChildActivations once they exist; the continuation
manager (``host.subagents.manager``) is a ``Residency`` that adds starting, followup/cold
resume, interrupt and report.

* **Lineage** — ``ancestry(agent)`` is the agent and the live agents above it, nearest first;
  a ChildActivation stores the ancestry of its parent at materialization time.
* **Admission accounting** — a send into a parent that is itself resident holds the parent's
  admission counter (``admitted``), so it cannot settle between acceptance and the wake.
* **Settlement** — after each turn the manager waits for the child to be idle and decides:
  turn work pending, a send being admitted, or admission closed around it → stay; resident
  children → ``waiting``; otherwise settle: final durable checkpoint, dispose (which releases
  the session), then the settlement notice to the live direct parent (a followup when it is
  idle, a steer when it is running) — unless another host took the child's session over
  meanwhile (its voice no longer holds: one log line, no notice; while storage cannot tell,
  the notice waits for it). The parent's own ChildActivation then re-checks its settlement.
* **Drain** — ``drain`` closes admission below a parent (``DRAINING``) and releases its
  resident descendants child-first, quietly (no notice); ``aclose`` does it for every resident
  child and keeps admission closed for good.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import Callable, Coroutine, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from host.agents.agent import Agent
from host.agents.driver import TurnOutcome
from host.agents.inbox import InboxClosedError
from host.agents.registry import AgentRegistry
from host.errors import HostError, log_failure
from host.sessions.model import Delivery
from host.sessions.persistence import PersistenceError
from host.subagents import texts
from host.subagents.child_activation import ChildActivation
from host.subagents.descriptors import ContinuableDescriptor
from host.subagents.types import MessageSource
from host.subagents.voices import ensure_voice

log = logging.getLogger(__name__)

FIRST_RETRY, MAX_RETRY = 1.0, 60.0  # seconds: a notice waiting for storage asks again


def settlement(activation: ChildActivation) -> tuple[str, dict[str, str]]:
    """The settlement notice of a settled ``activation`` and its ``source``."""
    last = activation.last
    assert last is not None
    text = texts.settlement_notice(activation.id, last.stop_reason, last.last_answer)
    return text, MessageSource("subagent-settled", activation.id).as_dict()


class Residency:
    """The resident ChildActivations over one agent registry (module docstring)."""

    def __init__(self, agents: AgentRegistry) -> None:
        self.agents = agents
        self._residents: dict[str, ChildActivation] = {}
        self._draining: Counter[str] = Counter()
        self._closed = False
        self._stopping = asyncio.Event()  # set by aclose: a notice waiting for storage stops
        self._tasks: set[asyncio.Task[None]] = set()

    def activation(self, child_id: str) -> ChildActivation | None:
        """The resident ChildActivation of ``child_id`` (closing ones included), if any."""
        return self._residents.get(child_id)

    def residents(self) -> list[ChildActivation]:
        """Every ChildActivation, in materialization order."""
        return list(self._residents.values())

    # -- lineage and admission ---------------------------------------------------------------

    def ancestry(self, agent: Agent) -> tuple[Agent, ...]:
        """``agent`` and the live agents above it, nearest first (stops at the first gap)."""
        own = self.own_activation(agent)
        if own is not None:
            return (agent, *own.ancestors)
        return (agent, *self.live_chain(agent.session.header.parent_session))

    def live_chain(self, agent_id: str | None) -> tuple[Agent, ...]:
        """The live agent ``agent_id`` and those above it, nearest first; an agent with an
        ChildActivation here contributes its recorded ancestry (stops at a gap or a cycle)."""
        chain: list[Agent] = []
        seen: set[str] = set()
        while agent_id is not None and agent_id not in seen:
            seen.add(agent_id)
            agent = self.agents.get(agent_id)
            if agent is None:
                break
            own = self.own_activation(agent)
            if own is not None:
                return (*chain, agent, *own.ancestors)
            chain.append(agent)
            agent_id = agent.session.header.parent_session
        return tuple(chain)

    def own_activation(self, agent: Agent) -> ChildActivation | None:
        """The ChildActivation of this exact ``agent`` object, if it is resident here."""
        activation = self._residents.get(agent.id)
        return activation if activation is not None and activation.agent is agent else None

    def draining_for(self, ids: Iterable[str]) -> bool:
        """True when admission is closed for any of ``ids`` (or the manager is closed)."""
        return self._closed or any(self._draining[agent_id] > 0 for agent_id in ids)

    @contextmanager
    def admitted(self, activation: ChildActivation | None) -> Iterator[None]:
        """Hold ``activation``'s admission counter around a send into it (None: no-op)."""
        if activation is None:
            yield
            return
        activation.admissions += 1
        try:
            yield
        finally:
            activation.admissions -= 1
            if activation.admissions == 0:
                self.schedule_check(activation)

    def adopt(
        self,
        agent: Agent,
        descriptor: ContinuableDescriptor,
        ancestors: tuple[Agent, ...],
        *,
        resumed: bool,
    ) -> ChildActivation:
        """Make ``agent`` resident: its ChildActivation, linked to a resident parent's, and checked
        for settlement after each turn."""
        activation = ChildActivation(agent, descriptor, ancestors, resumed=resumed)
        self._residents[agent.id] = activation
        if ancestors:
            parent_activation = self.own_activation(ancestors[0])
            if parent_activation is not None and not parent_activation.closing:
                parent_activation.children.add(agent.id)

        def turn_ended(outcome: TurnOutcome) -> None:
            activation.turns += 1
            activation.last = outcome
            self.schedule_check(activation)

        activation.unlisten = agent.on_turn_end(turn_ended)
        return activation

    # -- settlement --------------------------------------------------------------------------

    def spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Run ``coro`` as a task this residency tracks (failures logged; cancelled by aclose)."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("continuation manager task failed", exc_info=task.exception())

    def schedule_check(self, activation: ChildActivation) -> None:
        """Check ``activation``'s settlement once it is idle (unless a check is pending)."""
        if activation.closing or (activation.check is not None and not activation.check.done()):
            return
        activation.check = self.spawn(self._check(activation))

    async def _check(self, activation: ChildActivation) -> None:
        await activation.agent.wait_idle()
        if activation.closing or activation.admissions > 0:
            return
        if activation.agent.closed:  # disposed from outside: release quietly
            activation.phase = "closing"
            self.spawn(self._finish(activation, notify=False))
            return
        if activation.agent.status == "running" or activation.has_turn_work():
            return
        if activation.children or self.draining_for((activation.id, *activation.ancestor_ids)):
            return
        activation.phase = "closing"
        self.spawn(self._finish(activation, notify=True))

    async def _finish(self, activation: ChildActivation, *, notify: bool) -> None:
        """Settle (``notify``) or release: checkpoint, dispose, forget, notify the parent."""
        activation.phase = "closing"
        activation.unlisten()
        try:
            activation.agent.session.commit(durable=True)
        except Exception:
            log_failure(log, "final checkpoint of subagent %s failed", activation.id)
        try:
            await activation.agent.dispose()
        except Exception:
            log_failure(log, "disposing subagent %s failed", activation.id)
        # Still a child of its parent here meanwhile, so that the parent cannot settle first.
        notice = notify and activation.last is not None and not await self._fenced(activation)
        if self._residents.get(activation.id) is activation:
            del self._residents[activation.id]
        parent_activation = self._residents.get(activation.parent_id or "")
        if parent_activation is not None:
            parent_activation.children.discard(activation.id)
        activation.mark_done()
        try:
            delivered = notice and await self._notify_parent(activation, parent_activation)
            if notice and not delivered:
                await self._notify_elsewhere(activation)
        finally:  # a notice that failed to append must not leave the parent unchecked
            if parent_activation is not None:
                self.schedule_check(parent_activation)

    async def _fenced(self, activation: ChildActivation) -> bool:
        """Whether another host took the settled child's session over meanwhile (the child
        lives on there): then no notice, one log line. Checked for a parent live here only;
        for one elsewhere, the statement that queues the notice checks it. When storage cannot
        tell, retried with a growing delay while that parent is live here, until shutdown."""
        delay = FIRST_RETRY
        while self._live_parent(activation) is not None:
            try:
                await ensure_voice(activation.voice)
                return False
            except PersistenceError:  # the database is away: the notice waits for it
                if self._closed:
                    log_failure(log, "settlement notice of subagent %s not sent", activation.id)
                    return True
                if delay == FIRST_RETRY:
                    log_failure(log, "settlement notice of subagent %s waits", activation.id)
            except Exception:  # another host took the child over (LOCKED)
                log_failure(log, "settlement notice of subagent %s not sent", activation.id)
                return True
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), delay)
            delay = min(delay * 2, MAX_RETRY)
        return False

    async def _notify_elsewhere(self, activation: ChildActivation) -> None:
        """Give the settlement notice to a parent that is not live here (on another host);
        here, such a parent gets nothing (the manager sends it across hosts)."""

    def _live_parent(self, activation: ChildActivation) -> Agent | None:
        """The settled ``activation``'s parent if it is live here."""
        parent_id = activation.parent_id
        parent = self.agents.get(parent_id) if parent_id is not None else None
        return None if parent is None or parent.closed else parent

    async def _notify_parent(
        self, activation: ChildActivation, parent_activation: ChildActivation | None
    ) -> bool:
        """Give the live parent here the settlement notice; False when it is not live here,
        or another host took its session over (then the notice goes where it lives now). A
        refused notice is one log line, never a failed task."""
        parent = self._live_parent(activation)
        if activation.last is None or parent is None:
            return False
        text, source = settlement(activation)
        owner = (
            parent_activation if parent_activation and parent_activation.agent is parent else None
        )
        with self.admitted(owner):
            try:
                delivery: Delivery = "followup" if parent.status == "idle" else "steer"
                await parent.inbox.accept_async(delivery, text, source)
            except InboxClosedError:
                log.info("parent of subagent %s closed before its settlement notice", activation.id)
            except HostError as error:  # the parent's log refuses writes (full disk, lost lease)
                log_failure(
                    log,
                    "settlement notice of subagent %s to its parent %s failed",
                    activation.id,
                    parent.id,
                )
                return error.code != PersistenceError.LOCKED  # LOCKED: it lives elsewhere now
        return True

    # -- drain and shutdown ------------------------------------------------------------------

    async def release(self, activation: ChildActivation) -> None:
        """Release one ChildActivation quietly (no notice); waits for one already closing."""
        if activation.closing:
            await activation.wait_done()
            return
        activation.phase = "closing"
        await self._finish(activation, notify=False)

    async def drain(self, parent_id: str) -> None:
        """Close admission below ``parent_id`` and release its resident descendants child-first."""
        self._draining[parent_id] += 1
        try:
            await self._release_all(lambda a: parent_id in a.ancestor_ids)
        finally:
            self._draining[parent_id] -= 1
            if self._draining[parent_id] <= 0:
                del self._draining[parent_id]
        own = self._residents.get(parent_id)
        if own is not None:
            self.schedule_check(own)

    async def aclose(self) -> None:
        """Shutdown: close admission for good and release every resident child, child-first."""
        self._closed = True
        self._stopping.set()
        await self._release_all(lambda a: True)
        for task in list(self._tasks):
            task.cancel()

    async def _release_all(self, selected: Callable[[ChildActivation], bool]) -> None:
        while True:
            victims = [a for a in self._residents.values() if selected(a)]
            if not victims:
                return
            victims.sort(key=lambda a: len(a.ancestors), reverse=True)
            for activation in victims:
                await self.release(activation)
