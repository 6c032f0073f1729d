"""The ``agents`` service: live agents by id, and creation/resume as a transaction.

Creating an agent builds its own tool and prompt scopes over the global ones, runs the setup
steps (each installs something and returns its disposer), then the commit check, and only then
publishes the session and registers the agent. If a step, the commit check or publishing
raises, nothing is published and every installation so far is disposed, newest first; a
rollback that fails too raises one ``ExceptionGroup`` holding the original error first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import attrs

from host.agents.agent import DEFAULT_MAX_STEPS, Agent, AgentSession, AgentStatus
from host.agents.models import Model, ModelRegistry
from host.agents.prompt import PromptSection, SectionView, section_registry
from host.agents.remote import RemoteReceiver
from host.disposal import Disposer, adispose_reversed, dispose_errors, roll_back
from host.errors import HostError
from host.naming import NamedRegistry
from host.services import Lookup
from host.sessions.model import EventBody, SessionHeader, new_id
from host.sessions.remote import SharedPersistence
from host.sessions.store import Session, SessionStore
from host.tools.filter import ToolFilter
from host.tools.scope import ToolView, tool_registry
from host.tools.tool import Tool


class AgentExistsError(HostError):
    """An id that already names a live agent (code ``DUPLICATE_AGENT``)."""

    def __init__(self, agent_id: str) -> None:
        super().__init__("DUPLICATE_AGENT", f'agent "{agent_id}" is already live')


@attrs.frozen
class AgentSetup:
    """What a setup step may touch: the unpublished agent, its own scopes, its session, and the
    ``descriptor`` its creator describes it by (a continuable child's descriptor), if any."""

    agent: Agent
    tools: NamedRegistry[Tool]
    sections: NamedRegistry[PromptSection]
    descriptor: Any = None
    resumed: bool = False

    @property
    def id(self) -> str:
        """The agent (= session) id."""
        return self.agent.id

    @property
    def session(self) -> AgentSession:
        """The agent's session (unpublished during creation)."""
        return self.agent.session

    @property
    def label(self) -> str | None:
        """The agent's label."""
        return self.agent.label


SetupStep = Callable[[AgentSetup], Disposer]
CommitCheck = Callable[[AgentSetup], None]


@attrs.frozen
class AgentOptions:
    """How an agent is built (the keyword arguments of ``create``/``resume``)."""

    label: str | None = None
    model: str | None = None
    tool_filter: ToolFilter = attrs.field(factory=ToolFilter)
    setup: Sequence[SetupStep] = ()
    commit: CommitCheck | None = None
    descriptor: Any = None
    max_steps: int = DEFAULT_MAX_STEPS


class AgentRegistry:
    """Maps live agent ids to the exact ``Agent`` objects; creates and resumes agents."""

    def __init__(
        self,
        store: SessionStore,
        models: ModelRegistry,
        tools: NamedRegistry[Tool],
        sections: NamedRegistry[PromptSection],
        ctx: Lookup | None = None,
    ) -> None:
        self.store = store
        self.models = models
        self.tools = tools
        self.sections = sections
        self.ctx = ctx
        self._agents: dict[str, Agent] = {}
        persistence = store.persistence
        self.remote = (
            RemoteReceiver(self, persistence.inbox)
            if isinstance(persistence, SharedPersistence)
            else None
        )

    def get(self, agent_id: str) -> Agent | None:
        """The live agent with this id, or None."""
        return self._agents.get(agent_id)

    def status(self, agent_id: str) -> AgentStatus | None:
        """``"running"`` / ``"idle"`` for a live agent, None for an unknown id."""
        agent = self._agents.get(agent_id)
        return agent.status if agent else None

    def list(self) -> list[Agent]:
        """Every live agent, in registration order."""
        return list(self._agents.values())

    def __contains__(self, agent_id: object) -> bool:
        return agent_id in self._agents

    def __len__(self) -> int:
        return len(self._agents)

    async def create(
        self,
        header: SessionHeader | None = None,
        *,
        seed: Sequence[EventBody] = (),
        label: str | None = None,
        model: str | None = None,
        tool_filter: ToolFilter | None = None,
        setup: Sequence[SetupStep] = (),
        commit: CommitCheck | None = None,
        descriptor: Any = None,
        max_steps: int = DEFAULT_MAX_STEPS,
    ) -> Agent:
        """Create, set up, commit, publish and register a new agent (all or nothing).

        ``header`` defaults to a fresh id (recording ``label``); ``seed`` pre-fills the
        session (forks); ``model`` names a registered model (None: the default);
        ``tool_filter`` limits the global tools.
        """
        opts = AgentOptions(
            label, model, tool_filter or ToolFilter(), setup, commit, descriptor, max_steps
        )
        self._receive_remote()
        header = header if header is not None else SessionHeader(new_id("agent_"), label=label)
        if header.id in self._agents:
            raise AgentExistsError(header.id)
        resolved = self.models.resolve(opts.model)
        session = self.store.new(header, seed=seed)
        agent = self._build(session, resolved, opts)
        await self._transaction(
            agent, opts, lambda: self.store.publish_async(session), resumed=False
        )
        return agent

    async def resume(
        self,
        session_id: str,
        *,
        label: str | None = None,
        model: str | None = None,
        tool_filter: ToolFilter | None = None,
        setup: Sequence[SetupStep] = (),
        commit: CommitCheck | None = None,
        descriptor: Any = None,
        max_steps: int = DEFAULT_MAX_STEPS,
    ) -> Agent:
        """Resume a stored session as a live agent: same setup path, then replay its inbox.

        Accepted-but-unclaimed messages are queued again in acceptance order; followups and
        steers among them start a turn once the agent is registered. The store repairs the log
        first (a turn left open gets ``TurnEnd(interrupted)``); tool calls it left without
        results get theirs before any other turn (``host.approvals.resume``: a request for
        approval still pending is asked again).
        """
        opts = AgentOptions(
            label, model, tool_filter or ToolFilter(), setup, commit, descriptor, max_steps
        )
        self._receive_remote()
        if session_id in self._agents:
            raise AgentExistsError(session_id)
        resolved = self.models.resolve(opts.model)
        session = await self.store.resume(session_id)
        try:
            agent = self._build(session, resolved, opts)
            agent.inbox.replay(session.events)
            from host.approvals.resume import resume_unfinished  # only a resume needs it

            resume_unfinished(agent)
        except BaseException:
            self.store.release(session_id)
            raise
        await self._transaction(agent, opts, None, resumed=True)
        return agent

    def _receive_remote(self) -> None:
        if self.remote is not None:
            self.remote.ensure_started()

    async def aclose(self) -> None:
        """Host shutdown: stop receiving from other hosts, dispose every live agent."""
        if self.remote is not None:
            await asyncio.to_thread(self.remote.close)
        await self.dispose_all()

    async def dispose_all(self) -> None:
        """Dispose every live agent (newest first); failures raise one ``ExceptionGroup``."""
        failed = await adispose_reversed(self.list(), lambda agent: agent.dispose())
        if failed:
            raise ExceptionGroup("disposing agents failed", [error for _, error in failed])

    # -- the transaction -------------------------------------------------------------------

    def _build(self, session: Session, model: Model, opts: AgentOptions) -> Agent:
        tools = ToolView(self.tools, tool_registry("scoped tool"), opts.tool_filter, session.header)
        sections = SectionView(self.sections, section_registry("scoped prompt section"))
        return Agent(
            session,
            model,
            tools,
            sections,
            label=opts.label,
            max_steps=opts.max_steps,
            ctx=self.ctx,
            active=False,
        )

    async def _transaction(
        self,
        agent: Agent,
        opts: AgentOptions,
        publish: Callable[[], Awaitable[None]] | None,
        *,
        resumed: bool,
    ) -> None:
        """Setup steps, commit check, publish, register; roll everything back on failure (and
        on a cancellation while publishing: nothing is then published)."""
        setup = AgentSetup(agent, agent.tools.own, agent.sections.own, opts.descriptor, resumed)
        installed: list[Disposer] = []
        if resumed:
            installed.append(lambda: self.store.release(agent.id))
        try:
            for step in opts.setup:
                disposer = step(setup)
                if not callable(disposer):
                    raise TypeError(f"setup step {step!r} returned {disposer!r}, not a disposer")
                installed.append(disposer)
            if opts.commit is not None:
                opts.commit(setup)
            if publish is not None:
                await publish()
        except BaseException as error:
            roll_back(
                error,
                lambda: dispose_errors(installed),
                f"creating agent {agent.id} failed and its rollback failed",
            )
            raise
        if not resumed:
            installed.insert(0, lambda: self.store.release(agent.id))
        for disposer in installed:
            agent.add_disposer(disposer)
        self._agents[agent.id] = agent
        agent.add_disposer(lambda: self._unregister(agent))
        agent.activate()

    def _unregister(self, agent: Agent) -> None:
        if self._agents.get(agent.id) is agent:
            del self._agents[agent.id]
