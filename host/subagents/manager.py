"""The continuation manager: starting, followup and cold resume, interrupt and report.

It exists only while the ``agents`` service does (the service builds one per registry). It is
a ``host.subagents.residency.Residency``: what happens to a ChildActivation once it exists
(admission, settlement, drain) is written there.

* **Materialization** — fresh creation and cold resume take the same setup path: base
  composition (the persona section and the profile's memory), then the continuable setup
  registry's contributions, then its commit check, all inside the agent registry's creation
  transaction. A fresh child is seeded with its continuable descriptor (an own event:
  ``seq == seed_length``), recorded in the identity index after publication.
* **Followup** — authority is the exact live agent registered under the child's durable
  ``parent_session``. A resident child gets the message in its inbox; a cold child is read
  (``inspect``), authorized against its stored header, rebuilt from its descriptor by the
  identity rule and resumed (repairing load, inbox replay) under a per-child lock, so
  concurrent followups materialize it once.
* **Interrupt** — the caller must be a live ancestor by the target's materialization-time
  lineage; only the current turn stops (``keep_inbox``).
* **Report** — only the exact resident child may report, only to its live direct parent.
* **Other hosts** — with a backend shared by several hosts (``host.subagents.remote``), a
  followup for a child another host holds and a report for a parent live on another host are
  queued for that host instead; this manager also delivers what other hosts queue for it.
* **Voices** — no message leaves on behalf of a session another host took over
  (``host.subagents.voices``): a followup is fenced by the parent's voice, a report and a
  settlement notice by the child's.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any, NoReturn

from host.agents.agent import Agent
from host.agents.inbox import InboxClosedError, MessageId
from host.agents.registry import AgentExistsError, AgentRegistry
from host.cancel import CancelSignal, cancelled
from host.disposal import Disposer
from host.errors import HostError
from host.sessions.model import Delivery, Event, SessionHeader
from host.sessions.persistence import PersistenceError, SessionPersistence
from host.sessions.remote import RemoteMessage, SharedPersistence
from host.sessions.store import SessionError
from host.subagents import texts
from host.subagents.child_activation import ChildActivation
from host.subagents.children import (
    composition_step,
    continuable_descriptor,
    descriptor_event,
    plan_child,
    resume_max_steps,
)
from host.subagents.coldstate import continuable_descriptor_of, inspect_child, storage_error
from host.subagents.descriptors import ContinuableDescriptor
from host.subagents.errors import SubagentError
from host.subagents.index import IdentityIndex
from host.subagents.remote import RemoteSender
from host.subagents.residency import Residency
from host.subagents.setup import ContinuableSetupRegistry
from host.subagents.types import (
    ORIGIN,
    ChildRequest,
    ContinuableStart,
    MessageSource,
    Provider,
    ReportDelivery,
)
from host.subagents.voices import ensure_voice

LIVE_ALREADY = frozenset(
    {"DUPLICATE_AGENT", SessionError.DUPLICATE_SESSION, SessionError.ALREADY_LIVE}
)
"""The agent registry's and the session store's codes for an id that is live already."""


@contextmanager
def _duplicate_child(error_for: Callable[[HostError], SubagentError]) -> Iterator[None]:
    """Raise ``error_for(error)`` (a ``DUPLICATE_CHILD``) for an id that is live already."""
    try:
        yield
    except (AgentExistsError, SessionError) as error:
        if error.code in LIVE_ALREADY:
            raise error_for(error) from error
        raise


class _LockEntry:
    """A per-child lock and how many followups use it (dropped when none do)."""

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0


class ContinuationManager(Residency):
    """Continuable children over one agent registry (module docstring): a ``Residency`` (which
    owns their ChildActivations once they exist) that starts, continues, interrupts and reports."""

    def __init__(
        self,
        agents: AgentRegistry,
        setup: ContinuableSetupRegistry,
    ) -> None:
        super().__init__(agents)
        self.setup = setup
        self._locks: dict[str, _LockEntry] = {}
        persistence = self.persistence
        self.remote = (
            RemoteSender(self, persistence.inbox)
            if isinstance(persistence, SharedPersistence)
            else None
        )
        self._stop_orphans: Disposer = lambda: None
        if self.remote is not None and agents.remote is not None:
            self._stop_orphans = agents.remote.on_orphan(self.remote.deliver_orphan)
            agents.remote.on_resident(self.accept_remote)

    @property
    def persistence(self) -> SessionPersistence | None:
        """The persistence the agents' session store writes through."""
        return self.agents.store.persistence

    def _check_admission(self, lineage: Iterable[str], signal: CancelSignal | None) -> None:
        if cancelled(signal):
            raise texts.cancelled()
        if self.draining_for(lineage):
            raise texts.draining()

    # -- start -----------------------------------------------------------------------------

    async def start(
        self,
        provider: Provider,
        request: ChildRequest,
        *,
        parent: Agent,
        label: str,
        signal: CancelSignal | None,
        index: IdentityIndex | None = None,
    ) -> ContinuableStart:
        """Create, publish and adopt a continuable child (recorded in ``index``, if any);
        return at its prompt's acceptance (the service checked that persistence is present)."""
        if not provider.capabilities.continuable:
            raise texts.not_continuable_provider(provider.name)
        ancestors = self.ancestry(parent)
        if self.draining_for(a.id for a in ancestors):
            raise texts.draining()
        if cancelled(signal):
            raise texts.start_cancelled()
        plan = plan_child(provider, request, parent, label=label)
        descriptor = continuable_descriptor(provider, plan, label)
        hooks = self.setup.setup_step()
        with self.admitted(self.own_activation(parent)):
            with _duplicate_child(lambda error: texts.duplicate_child(error.message)):
                agent = await self.agents.create(
                    plan.header,
                    seed=(*plan.seed, descriptor_event(descriptor)),
                    label=label,
                    model=plan.model,
                    tool_filter=plan.tool_filter,
                    setup=[composition_step(plan.persona, plan.memory), hooks.step],
                    commit=hooks.commit,
                    descriptor=descriptor,
                    max_steps=plan.max_steps,
                )
            if index is not None:
                index.record(plan.header, descriptor, plan.header.seed_length, new=True)
            activation = self.adopt(agent, descriptor, ancestors, resumed=False)
            try:
                message_id = await agent.inbox.accept_async(
                    "followup", request.prompt, request.start_source(parent.id)
                )
            except Exception:
                self.schedule_check(activation)
                raise
        return ContinuableStart(agent.id, message_id)

    # -- followup ----------------------------------------------------------------------------

    async def followup(
        self,
        parent: Agent,
        child_id: str,
        content: str,
        *,
        source: dict[str, Any] | None,
        signal: CancelSignal | None,
        message_id: MessageId | None = None,
    ) -> MessageId:
        """Deliver ``content`` as the child's next turn, cold-resuming it once if needed.

        A child another host holds gets it through that host. ``message_id`` keeps an id
        already handed out (a queued message this host delivers itself).
        """
        self._check_admission((a.id for a in self.ancestry(parent)), signal)
        resident = self.activation(child_id)
        if resident is not None:
            return await self._deliver(resident, parent, content, source, message_id)
        with self.admitted(self.own_activation(parent)):
            async with self._child_lock(child_id):
                resident = self.activation(child_id)
                if resident is not None:
                    return await self._deliver(resident, parent, content, source, message_id)
                descriptor = await self._authorize_cold(parent, child_id, signal)
                if self.remote is not None and message_id is None:
                    sender = (parent.id, parent.session.voice())
                    queued = await self.remote.send(child_id, "followup", content, source, sender)
                    if queued is not None:
                        return queued
                await ensure_voice(parent.session.voice())  # before it takes the child
                resident = await self._materialize(parent, child_id, descriptor, signal)
                try:
                    return await self._deliver(resident, parent, content, source, message_id)
                except BaseException:
                    # Materialized for nothing (e.g. the parent went away meanwhile): with
                    # no turn to end, only a check lets it settle (quietly: no last turn).
                    self.schedule_check(resident)
                    raise

    async def wake(self, parent: Agent, path: Sequence[str]) -> None:
        """Make ``path`` resident, each under the one before (``path[0]`` under ``parent``),
        cold-resuming those that are not as ``followup`` does but with no message: a resumed
        child's open requests to the user are asked again (``host.approvals.resume``) and its
        turn goes on. Each stays resident while the next is resumed below it; the last one,
        with nothing to do, settles."""
        child_id, rest = path[0], path[1:]
        with self.admitted(self.own_activation(parent)):
            async with self._child_lock(child_id):
                resident = self.activation(child_id)
                if resident is None:
                    descriptor = await self._authorize_cold(parent, child_id, None)
                    await ensure_voice(parent.session.voice())  # before it takes the child
                    resident = await self._materialize(parent, child_id, descriptor, None)
            if rest:
                await self.wake(resident.agent, rest)
            else:
                self.schedule_check(resident)

    @asynccontextmanager
    async def _child_lock(self, child_id: str) -> AsyncIterator[None]:
        """Hold the per-child lock under which a cold child is materialized once."""
        entry = self._locks.setdefault(child_id, _LockEntry())
        entry.users += 1
        try:
            async with entry.lock:
                yield
        finally:
            entry.users -= 1
            if entry.users == 0 and self._locks.get(child_id) is entry:
                del self._locks[child_id]

    async def _deliver(
        self,
        activation: ChildActivation,
        parent: Agent,
        content: str,
        source: dict[str, Any] | None,
        message_id: MessageId | None = None,
    ) -> MessageId:
        if not parent.closed:  # first, as the checks below do not wait (closed: stale, below)
            await ensure_voice(parent.session.voice())
        self._authorize_parent(activation.parent_id, parent, activation.id)
        if activation.closing:
            raise texts.closing(activation.id)
        try:
            return await activation.agent.inbox.accept_async(
                "followup", content, source, message_id=message_id
            )
        except InboxClosedError as error:
            raise texts.closing(activation.id) from error

    def _authorize_parent(self, parent_session: str | None, parent: Agent, child_id: str) -> None:
        if parent_session is None or parent_session != parent.id:
            raise texts.other_parent(child_id)
        if self.agents.get(parent_session) is not parent or parent.closed:
            raise texts.stale_parent(child_id)

    async def _authorize_cold(
        self, parent: Agent, child_id: str, signal: CancelSignal | None
    ) -> ContinuableDescriptor:
        """Read a child that is not resident here and authorize ``parent`` against its stored
        header; its continuable descriptor (by the identity rule)."""
        persistence = self.persistence
        if persistence is None:
            raise texts.persistence_unavailable()
        live = self.agents.store.get(child_id)
        if live is not None:  # live, but not a resident ChildActivation of this manager
            self._refuse_live(parent, child_id, live.header, live.events)
        stored = await inspect_child(persistence, child_id, signal)
        header = stored.header
        if header.origin != ORIGIN:
            raise texts.unavailable(child_id)
        self._authorize_parent(header.parent_session, parent, child_id)
        descriptor = continuable_descriptor_of(stored.events, header)
        if descriptor is None:
            raise texts.not_resumable(child_id)
        return descriptor

    async def _materialize(
        self,
        parent: Agent,
        child_id: str,
        descriptor: ContinuableDescriptor,
        signal: CancelSignal | None,
    ) -> ChildActivation:
        """Cold resume of an authorized child through the shared setup path."""
        ancestors = self.ancestry(parent)
        self._check_admission((a.id for a in ancestors), signal)
        agent = await self._resume_agent(child_id, descriptor)
        activation = self.adopt(agent, descriptor, ancestors, resumed=True)
        try:
            self._check_admission((a.id for a in ancestors), signal)
        except SubagentError:
            self.spawn(self.release(activation))
            raise
        return activation

    def _refuse_live(
        self, parent: Agent, child_id: str, header: SessionHeader, events: Sequence[Event]
    ) -> NoReturn:
        """A live session that is no resident ChildActivation here cannot be resumed or adopted."""
        if header.origin != ORIGIN:
            raise texts.unavailable(child_id)
        self._authorize_parent(header.parent_session, parent, child_id)
        if continuable_descriptor_of(events, header) is None:
            raise texts.not_resumable(child_id)
        raise texts.live_outside(child_id)

    async def _resume_agent(self, child_id: str, descriptor: ContinuableDescriptor) -> Agent:
        hooks = self.setup.setup_step()
        try:
            with _duplicate_child(lambda _: texts.already_live(child_id)):
                return await self.agents.resume(
                    child_id,
                    label=descriptor.label,
                    model=descriptor.model,
                    tool_filter=descriptor.tool_filter,
                    setup=[composition_step(descriptor.persona, descriptor.memory), hooks.step],
                    commit=hooks.commit,
                    descriptor=descriptor,
                    max_steps=resume_max_steps(descriptor),
                )
        except PersistenceError as error:
            raise storage_error(child_id, error) from error

    # -- interrupt and report ----------------------------------------------------------------

    def interrupt(self, target_id: str, *, caller: Agent) -> None:
        """Stop the target's current turn if ``caller`` is a live ancestor; else no-op/raise."""
        activation = self.activation(target_id)
        if activation is not None:
            if activation.closing:
                return
            ancestors, target = activation.ancestors, activation.agent
        else:
            found = self.agents.get(target_id)
            if found is None:
                return
            parent_session = found.session.header.parent_session
            ancestors, target = self.live_chain(parent_session), found
        caller_id = caller.id
        recorded = next((a for a in ancestors if a.id == caller_id), None)
        if recorded is None:
            raise texts.not_descendant(target_id, caller_id)
        if recorded is not caller or self.agents.get(caller_id) is not caller or caller.closed:
            raise texts.stale_ancestor(target_id)
        target.interrupt(keep_inbox=True)

    async def report(
        self, child: Agent, content: str, *, delivery: ReportDelivery, signal: CancelSignal | None
    ) -> MessageId:
        """Deliver a report from the exact resident ``child`` to its live direct parent
        (here, or on the host that holds the parent)."""
        child_id = child.id
        activation = self.activation(child_id)
        if activation is None or activation.agent is not child:
            raise texts.not_reporter(child_id)
        if self.draining_for((child_id, *activation.ancestor_ids)):
            raise texts.report_draining()
        if activation.closing:
            raise texts.report_closing(child_id)
        if cancelled(signal):
            raise texts.report_cancelled()
        parent_id = child.session.header.parent_session
        parent = self.agents.get(parent_id) if parent_id is not None else None
        text = texts.report_text(child_id, content)
        source = MessageSource("subagent-report", child_id).as_dict()
        inbox_delivery: Delivery = "inject" if delivery == "quiet" else "steer"
        voice = child.session.voice()
        if parent is None and parent_id is not None and self.remote is not None:
            queued = await self.remote.send(
                parent_id, inbox_delivery, text, source, (child_id, voice)
            )
            if queued is not None:
                return queued
        await ensure_voice(voice)  # first: the checks below do not wait
        parent_activation = self.own_activation(parent) if parent is not None else None
        if parent is None or parent.closed or (parent_activation and parent_activation.closing):
            raise texts.parent_unavailable()
        with self.admitted(parent_activation):
            try:
                return await parent.inbox.accept_async(inbox_delivery, text, source)
            except InboxClosedError as error:
                raise texts.parent_unavailable() from error

    def accept_remote(self, message: RemoteMessage) -> bool | None:
        """Accept a message another host queued for a resident child of this manager.

        None: the target is no resident child (the receiver delivers it as to any agent).
        False: refused for now (closing, or admission closed): it stays queued and, once the
        child is released, its sender resumes it. True: accepted, under its queued id.
        """
        activation = self.activation(message.session_id)
        if activation is None:
            return None
        if activation.closing or self.draining_for((activation.id, *activation.ancestor_ids)):
            return False
        with self.admitted(activation):
            try:
                activation.agent.inbox.accept(
                    message.delivery, message.content, message.source, message_id=message.message_id
                )
            except InboxClosedError:
                return False
        return True

    async def _notify_elsewhere(self, activation: ChildActivation) -> None:
        """A parent live on another host gets the settlement notice through it."""
        if self.remote is not None:
            await self.remote.notify_settled(activation)

    async def aclose(self) -> None:
        """Stop resuming orphans, then shut down as ``Residency.aclose`` does (from then on
        ``accept_remote`` refuses: admission is closed)."""
        self._stop_orphans()
        await super().aclose()
