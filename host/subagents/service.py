"""``SubagentService``: the ``subagents`` service facade (docs/subagents.md).

Signatures (all ``async`` except ``interrupt``, ``resume_waiting`` and ``register_*``)::

    start(provider, request, *, parent, signal=None) -> SubagentRun
    start_continuable(provider, request, *, parent, label, signal=None) -> ContinuableStart
    followup(parent, child_id, content, *, source, signal=None) -> MessageId
    interrupt(target_id, *, caller) -> None
    cancel_waiting(target_id, *, caller) -> None;  resume_waiting(root) -> None
    list_children(parent_id, *, signal=None) -> list[SubagentListEntry]
    list_descendants(root_id, *, signal=None) -> list[SubagentListEntry]
    report_from(child, content, *, delivery, signal=None) -> MessageId
    register_continuable_setup(contribution) -> Disposer
    register_provider(provider) -> Disposer
    may_delegate(provider, header) -> bool  (sync; for tools' offered_to)
    drain_descendants(parent) -> None;  aclose() -> None

Services are looked up at **call time**, once per call: ``sessions``/``projections`` for
listing (so the ``SUBAGENT_CONTROL_*_UNAVAILABLE`` codes are reachable); for the other calls
one ``BoundServices`` — ``agents``, the continuation manager, which exists only while
``agents`` does (else ``CONTINUATION_UNAVAILABLE``), and the identity index.

Every ``SubagentError`` carries, as its message, the exact reason text an adapter shows:

============================  ================================================================
code                          message (``<id>`` = the child/target, ``<caller>`` = caller id)
============================  ================================================================
**followup**
UNAVAILABLE                   ``subagent "<id>" is unavailable``
NOT_RESUMABLE                 ``subagent "<id>" has no supported continuation state and cannot
                              be resumed; do not retry send_message with this id``
UNAUTHORIZED                  ``subagent "<id>" belongs to another parent session``
UNAUTHORIZED                  ``subagent "<id>" delivery requires the exact live parent agent``
ACTIVATION_CLOSING            ``subagent "<id>" is closing``
DRAINING                      ``subagents are draining``
LOCKED                        ``subagent "<id>" is in use by another host``
LOCKED                        ``session "<sender>" was taken over by another host since this
                              host held it; nothing was sent on its behalf`` (also a report)
CANCELLED                     ``cancelled before acceptance``
DUPLICATE_CHILD               ``subagent "<id>" is live outside the continuation manager``
**interrupt**
UNAUTHORIZED                  ``agent "<id>" cannot interrupt itself``
UNAUTHORIZED                  ``subagent "<id>" is not a live descendant of agent "<caller>"``
UNAUTHORIZED                  ``interrupting "<id>" requires the exact live ancestor agent``
**report_from**
UNAUTHORIZED                  ``agent "<id>" is not a live continuable subagent and cannot
                              report``
PARENT_UNAVAILABLE            ``direct parent is not live; report was not delivered``
ACTIVATION_CLOSING            ``subagent "<id>" is closing; report was not delivered``
DRAINING                      ``subagents are draining; report was not delivered``
CANCELLED                     ``report was cancelled before delivery``
**start / start_continuable**
NO_PROVIDER                   ``no subagent provider "<name>" is registered``
DUPLICATE_PROVIDER            ``a subagent provider "<name>" is already registered``
DEPTH_EXCEEDED                ``cannot start a subagent at delegation depth <d>: provider
                              "<name>" allows at most depth <limit>``
CANCELLED                     ``cancelled before the subagent was started``
DRAINING                      ``subagents are draining``
CONTINUATION_UNAVAILABLE      ``continuable subagents are unavailable: the agents service is
                              not present`` (or the provider cannot continue)
PERSISTENCE_UNAVAILABLE       ``continuable subagents need session persistence, which is not
                              present``
ACTIVATION_SETUP_REVOKED      from the setup registry (a contribution revoked meanwhile)
============================  ================================================================

Listing errors (``SUBAGENT_CONTROL_*_UNAVAILABLE``, ``CANCELLED``) come from
``host.subagents.listing``; settlement-notice and report texts live in ``host.subagents.texts``.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

import attrs

from host.cancel import CancelSignal, cancelled
from host.disposal import Disposer
from host.subagents import texts
from host.subagents.errors import SubagentError
from host.subagents.setup import ContinuableSetupRegistry, Contribution
from host.subagents.types import ReportDelivery

if TYPE_CHECKING:  # the runtime below is imported on first use: building the service is cheap
    from host.agents.agent import Agent
    from host.agents.inbox import MessageId
    from host.agents.registry import AgentRegistry
    from host.services import Lookup
    from host.sessions.model import SessionHeader
    from host.settings import HostSettings
    from host.subagents.entries import SubagentListEntry
    from host.subagents.index import IdentityIndex
    from host.subagents.listing import SubagentListing
    from host.subagents.manager import ContinuationManager
    from host.subagents.oneshot import DescriptorFirst, OneShotRun
    from host.subagents.providers import ProviderRegistry
    from host.subagents.types import (
        ChildRequest,
        ContinuableStart,
        Provider,
        SubagentRun,
    )

log = logging.getLogger(__name__)

INDEX_PATH = Path(".index") / "identity.jsonl"
"""Where the identity index lives, relative to the data directory."""


@attrs.frozen
class BoundServices:
    """What one call of the service works with, looked up once at its start (``_bind``)."""

    agents: AgentRegistry | None
    """The ``agents`` service, if present."""
    manager: ContinuationManager | None
    """The continuation manager of ``agents`` (None without it)."""
    index: IdentityIndex | None
    """The identity index of the data directory (None without persistence)."""


class SubagentService:
    """The ``subagents`` service (module docstring)."""

    def __init__(self, ctx: Lookup) -> None:
        self.ctx = ctx
        self._providers: ProviderRegistry | None = None
        self.setup = ContinuableSetupRegistry()
        self._manager: ContinuationManager | None = None
        self._indexes: dict[Path, IdentityIndex] = {}
        self._last_index: tuple[object, IdentityIndex] | None = None  # (data_dir, its index)
        self._private_agents: AgentRegistry | None = None
        self._runs: set[OneShotRun] = set()
        self._unit: tuple[Any, Disposer] | None = None

    # -- registration ----------------------------------------------------------------------

    @property
    def providers(self) -> ProviderRegistry:
        """The providers, ``spawn`` and ``fork`` first (built on first use: registering a
        setup contribution, all a plugin may do at activation, needs none of it)."""
        if self._providers is None:
            from host.subagents.providers import ProviderRegistry

            self._providers = ProviderRegistry()
        return self._providers

    def register_provider(self, provider: Provider) -> Disposer:
        """Add a provider; ``DUPLICATE_PROVIDER`` if its name is taken."""
        return self.providers.register(provider)

    def may_delegate(self, provider: str, header: SessionHeader) -> bool:
        """True if an agent with ``header`` may start a child with ``provider``: the provider
        is registered and the child would be within its depth limit (tools use this to hide
        the delegation tool from agents at the limit)."""
        try:
            chosen = self.providers.resolve(provider)
        except SubagentError:
            return False
        return header.delegation_depth + 1 <= chosen.capabilities.depth_limit

    def register_continuable_setup(self, contribution: Contribution) -> Disposer:
        """Add a setup contribution for later continuable ChildActivations; returns its disposer."""
        return self.setup.register(contribution)

    # -- one-shot ----------------------------------------------------------------------------

    async def start(
        self,
        provider: str,
        request: ChildRequest,
        *,
        parent: Agent,
        signal: CancelSignal | None = None,
    ) -> SubagentRun:
        """Publish a one-shot child running ``request.prompt`` as one turn (module docstring
        of ``host.subagents.oneshot``); rejections publish nothing."""
        from host.subagents.children import composition_step, one_shot_descriptor, plan_child
        from host.subagents.oneshot import OneShotRun, wrap_model_step

        if cancelled(signal):
            raise texts.start_cancelled()
        bound = self._bind()
        chosen = self.providers.resolve(provider)
        agents = self._agent_factory(bound)
        manager = bound.manager
        if manager is not None and manager.draining_for(a.id for a in manager.ancestry(parent)):
            raise texts.draining()
        plan = plan_child(chosen, request, parent, label=request.label)
        descriptor = one_shot_descriptor(chosen, plan)
        wrappers: list[DescriptorFirst] = []
        child = await agents.create(
            plan.header,
            seed=plan.seed,
            label=plan.label,
            model=plan.model,
            tool_filter=plan.tool_filter,
            setup=[
                composition_step(plan.persona, plan.memory),
                wrap_model_step(descriptor, bound.index, wrappers),
            ],
            max_steps=plan.max_steps,
        )
        run = OneShotRun(child, wrappers[0] if wrappers else None)
        self._runs.add(run)
        run.begin(request.prompt, request.start_source(parent.id), signal)

        async def result() -> Any:
            try:
                return await run.result()
            finally:
                self._runs.discard(run)

        from host.subagents.types import SubagentRun

        return SubagentRun(child.id, result)

    # -- continuable -------------------------------------------------------------------------

    async def start_continuable(
        self,
        provider: str,
        request: ChildRequest,
        *,
        parent: Agent,
        label: str,
        signal: CancelSignal | None = None,
    ) -> ContinuableStart:
        """Start a continuable child; returns once its prompt is accepted in its inbox."""
        bound = self._bind()
        manager = _require_manager(bound)
        if manager.persistence is None:
            raise texts.persistence_unavailable()
        chosen = self.providers.resolve(provider)
        return await manager.start(
            chosen, request, parent=parent, label=label, signal=signal, index=bound.index
        )

    async def followup(
        self,
        parent: Agent,
        child_id: str,
        content: str,
        *,
        source: dict[str, Any] | None,
        signal: CancelSignal | None = None,
    ) -> MessageId:
        """Queue ``content`` as the child's next turn (cold-resuming it if needed)."""
        manager = _require_manager(self._bind())
        return await manager.followup(parent, child_id, content, source=source, signal=signal)

    def interrupt(self, target_id: str, *, caller: Agent) -> None:
        """Stop the target's current turn; a missing or settled target is an accepted no-op
        (a stored one a restart left waiting on the user: ``cancel_waiting``)."""
        if target_id == caller.id:
            raise texts.interrupt_self(target_id)
        manager = self._bind().manager
        if manager is not None:
            manager.interrupt(target_id, caller=caller)

    async def cancel_waiting(self, target_id: str, *, caller: Agent) -> None:
        """After ``interrupt``: a target only stored, below ``caller``, that a restart left
        waiting on the user has its open requests cancelled, durably, before this returns
        (``host.subagents.waking.cancel_waiting``); any other target, nothing."""
        approvals, sessions = self.ctx.find("approvals"), self.ctx.find("sessions")
        manager = self._bind().manager
        if approvals is not None and sessions is not None and manager is not None:
            from host.subagents.waking import cancel_waiting

            await cancel_waiting(manager, approvals, sessions, target_id, caller)

    def resume_waiting(self, root: Agent) -> None:
        """Cold-resume the stored descendants of the live root ``root`` a restart left waiting
        on the user, so that their open requests are asked again and their turns go on
        (``host.subagents.waking``). In the background, from the caller's next await: a
        front end that has just resumed ``root`` can first make ready to be asked."""
        approvals, manager = self.ctx.find("approvals"), self._bind().manager
        if approvals is not None and manager is not None and approvals.stored_requesters(root):
            from host.subagents.waking import resume_waiting

            manager.spawn(resume_waiting(manager, approvals, root))

    async def report_from(
        self,
        child: Agent,
        content: str,
        *,
        delivery: ReportDelivery,
        signal: CancelSignal | None = None,
    ) -> MessageId:
        """Deliver ``content`` from the resident ``child`` to its live direct parent."""
        if delivery not in get_args(ReportDelivery):
            known = " or ".join(map(repr, get_args(ReportDelivery)))
            raise ValueError(f"delivery must be {known}, not {delivery!r}")
        manager = self._bind().manager
        if manager is None:
            raise texts.not_reporter(child.id)
        return await manager.report(child, content, delivery=delivery, signal=signal)

    async def drain_descendants(self, parent: Agent | str) -> None:
        """Close admission below ``parent`` and release its resident descendants child-first."""
        manager = self._bind().manager
        if manager is not None:
            await manager.drain(parent if isinstance(parent, str) else parent.id)

    # -- listing -----------------------------------------------------------------------------

    async def list_children(
        self, parent_id: str, *, signal: CancelSignal | None = None
    ) -> list[SubagentListEntry]:
        """The direct subagent children of ``parent_id`` (see ``host.subagents.listing``)."""
        return await self._listing().list_children(parent_id, signal=signal)

    async def list_descendants(
        self, root_id: str, *, signal: CancelSignal | None = None
    ) -> list[SubagentListEntry]:
        """Every subagent below ``root_id``, in stable pre-order with parent and depth."""
        return await self._listing().list_descendants(root_id, signal=signal)

    def _listing(self) -> SubagentListing:
        from host.subagents.listing import SubagentListing

        self._ensure_identity_unit()
        return SubagentListing(
            sessions=self.ctx.find("sessions"),
            projections=self.ctx.find("projections"),
            persistence=self.ctx.find("session_persistence"),
            index=self.index(),
        )

    # -- services ----------------------------------------------------------------------------

    def _bind(self) -> BoundServices:
        """The services for one call: the identity unit registered with the current
        ``projections``, the continuation manager of the current ``agents`` (built for a new
        registry, dropped without one), the identity index."""
        self._ensure_identity_unit()
        agents = self.ctx.find("agents")
        if agents is None:
            self._manager = None
        elif self._manager is None or self._manager.agents is not agents:
            from host.subagents.manager import ContinuationManager

            self._manager = ContinuationManager(agents, self.setup)
        return BoundServices(agents, self._manager, self.index())

    def manager(self) -> ContinuationManager | None:
        """The continuation manager a call would work with now (for the host's own callers:
        the CLI, tests); None while ``agents`` is absent."""
        return self._bind().manager

    def index(self) -> IdentityIndex | None:
        """The identity index of the data directory; None without persistence."""
        if self.ctx.find("session_persistence") is None:
            return None
        settings: HostSettings | None = self.ctx.find("settings")
        if settings is None:
            return None
        data_dir = settings.data_dir
        last = self._last_index
        if last is not None and last[0] is data_dir:  # the same settings: no path to build
            return last[1]
        path = Path(data_dir) / INDEX_PATH
        if path not in self._indexes:
            from host.subagents.index import IdentityIndex

            self._indexes[path] = IdentityIndex(path)
        self._last_index = (data_dir, self._indexes[path])
        return self._indexes[path]

    def _agent_factory(self, bound: BoundServices) -> AgentRegistry:
        """``agents``, or (without it) a private registry so one-shot children still run."""
        if bound.agents is not None:
            return bound.agents
        sessions, models = self.ctx.find("sessions"), self.ctx.find("models")
        if sessions is None or models is None:
            raise texts.runtime_unavailable()
        private = self._private_agents
        if private is None or private.store is not sessions or private.models is not models:
            from host.agents.prompt import section_registry
            from host.agents.registry import AgentRegistry
            from host.tools.scope import tool_registry

            tools = self.ctx.find("tools") or tool_registry()
            sections = self.ctx.find("prompt_sections") or section_registry()
            private = self._private_agents = AgentRegistry(
                sessions, models, tools, sections, self.ctx
            )
        return private

    def _ensure_identity_unit(self) -> None:
        """Register ``IDENTITY_UNIT`` with ``projections`` while it is present."""
        from host.sessions.projections import ProjectionError
        from host.subagents.identity import IDENTITY_KEY, IDENTITY_UNIT

        projections = self.ctx.find("projections")
        if self._unit is not None and self._unit[0] is projections:
            return
        if projections is None:
            self._unit = None
            return
        try:
            dispose = projections.register(IDENTITY_UNIT)
        except ProjectionError:  # someone registered it already
            existing = projections.get(IDENTITY_KEY)
            log.debug("identity unit already registered: %r", existing)
            dispose = lambda: None  # noqa: E731
        self._unit = (projections, dispose)

    # -- shutdown ----------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Host shutdown: release every resident child, stop one-shot runs, wait for them."""
        if self._manager is not None:
            await self._manager.aclose()
        runs = list(self._runs)
        for run in runs:
            run.interrupt()
        if runs:
            await asyncio.gather(*(run.result() for run in runs), return_exceptions=True)

    def close(self) -> None:
        """The plugin is going away: unregister the identity unit (idempotent)."""
        unit, self._unit = self._unit, None
        if unit is not None:
            unit[1]()


def _require_manager(bound: BoundServices) -> ContinuationManager:
    """``bound.manager``; ``CONTINUATION_UNAVAILABLE`` without one."""
    if bound.manager is None:
        raise texts.continuation_unavailable()
    return bound.manager
