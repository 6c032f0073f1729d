"""The host test harness: ``build_host``, ``call_tool``, ``HostHarness`` and its approvals
handle (what ``host.testing``, the pytest plugin for plugin authors, offers through its
fixtures and re-exports)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from host.app import Host
from host.builtins import builtin_candidates
from host.plugins.discovery import PluginCandidate, from_object
from host.plugins.record import DisposalFailure
from host.plugins.selection import Selection
from host.settings import HostSettings
from host.tools.execute import run_tool
from host.tools.tool import Tool, ToolExec, ToolResult

if TYPE_CHECKING:  # the runtime stays unimported until a harness is used
    from host.agents.agent import Agent
    from host.agents.registry import AgentRegistry
    from host.agents.scripted import ScriptedModel
    from host.approvals.requests import Answer, ApprovalRequest
    from host.approvals.service import ApprovalService
    from host.sessions.model import Event, MessageEvent
    from host.subagents.child_activation import ChildActivation
    from host.subagents.manager import ContinuationManager
    from host.subagents.service import SubagentService


def plugin_name(obj: Any) -> str:
    """The name a plugin object gets when none is given."""
    name = getattr(obj, "name", None)
    if isinstance(name, str):
        return name
    return str(getattr(obj, "__name__", type(obj).__name__)).rsplit(".", 1)[-1]


def build_host(
    *plugins: Any,
    data_dir: Path,
    builtins: bool = True,
    config: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Host:
    """An isolated, started host made of built-ins (optional) and the given plugin objects."""
    candidates: list[PluginCandidate] = builtin_candidates() if builtins else []
    for plugin in plugins:
        if isinstance(plugin, PluginCandidate):
            candidates.append(plugin)
        elif isinstance(plugin, tuple):
            candidates.append(from_object(plugin[0], plugin[1]))
        else:
            candidates.append(from_object(plugin_name(plugin), plugin))
    host = Host(
        HostSettings(data_dir=data_dir),
        selection=Selection.from_env(environ or {}),
        config=config,
    )
    host.add_plugins(candidates)
    return host.start()


async def call_tool(
    host: Host, name: str, args: Any, *, agent: Any = None, tool_call_id: str = "call-1"
) -> ToolResult:
    """Run the global tool ``name`` with raw ``args`` exactly as a turn would."""
    exec = ToolExec(agent=agent, ctx=host.services, tool_call_id=tool_call_id)
    return await run_tool(host.tools.get(name), name, args, exec)


class HostHarness:
    """A started host over ``data_dir`` (``build_host``) and handles on its services.

    ``plugins`` and the keyword options are those of ``build_host``. Subclass it to add the
    helpers of one plugin's scenarios; ``make_harness(cls=…)`` closes subclasses too.
    """

    def __init__(
        self,
        *plugins: Any,
        data_dir: Path,
        builtins: bool = True,
        config: Mapping[str, Any] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.data_dir = data_dir
        self.host: Host = build_host(
            *plugins, data_dir=data_dir, builtins=builtins, config=config, environ=environ
        )
        self.services = self.host.services
        self._approvals: ApprovalsHandle | None = None
        self._on_close: list[Callable[[], object]] = []
        self._closed = False

    # -- services ------------------------------------------------------------------------

    @property
    def model(self) -> ScriptedModel:
        """The scripted model the built-in ``models`` plugin registers as ``"scripted"``."""
        from host.agents.scripted import ScriptedModel

        model = self.services.models.resolve("scripted")
        assert isinstance(model, ScriptedModel)
        return model

    @property
    def agents(self) -> AgentRegistry:
        """The ``agents`` service."""
        agents: AgentRegistry = self.services.agents
        return agents

    @property
    def subagents(self) -> SubagentService:
        """The ``subagents`` service."""
        from host.subagents.service import SubagentService

        service = self.services.subagents
        assert isinstance(service, SubagentService)
        return service

    @property
    def manager(self) -> ContinuationManager:
        """The continuation manager of the ``subagents`` service (resident children)."""
        manager = self.subagents.manager()
        assert manager is not None
        return manager

    def activation(self, child_id: str) -> ChildActivation | None:
        """The resident activation of ``child_id``, or None when it is not resident."""
        return self.manager.activation(child_id)

    @property
    def approvals(self) -> ApprovalsHandle:
        """Answers the ``approvals`` service's requests in a test: ``answer(Answer.approve())``."""
        if self._approvals is None:
            self._approvals = ApprovalsHandle(self.services.approvals)
        return self._approvals

    # -- agents and tools ------------------------------------------------------------------

    def add_tool(self, made: Tool, *, owner: str = "test") -> None:
        """Register ``made`` as a global tool under its own name."""
        self.host.tools.register(made.name, made, owner=owner)

    async def call(
        self, name: str, args: Any, agent: Any = None, *, tool_call_id: str = "call-1"
    ) -> ToolResult:
        """Run the global tool ``name`` with raw ``args`` as ``agent`` would (``call_tool``)."""
        return await call_tool(self.host, name, args, agent=agent, tool_call_id=tool_call_id)

    async def root(self, label: str = "root") -> Agent:
        """A new root agent (no parent) labelled ``label``."""
        return await self.agents.create(label=label)

    async def settled(self, child_id: str, *parents: Agent) -> None:
        """Wait until ``child_id`` is no longer resident, then until ``parents`` are idle."""
        activation = self.activation(child_id)
        if activation is not None:
            await activation.wait_done()
        for parent in parents:
            await parent.wait_idle()

    # -- storage -----------------------------------------------------------------------------

    def log_path(self, session_id: str) -> Path:
        """Where the JSONL log of ``session_id`` lives."""
        return self.data_dir / f"{session_id}.jsonl"

    def session_ids(self) -> set[str]:
        """The ids of the session logs in the data directory."""
        return {p.stem for p in self.data_dir.glob("*.jsonl")}

    def session_files(self) -> dict[str, bytes]:
        """Every session log in the data directory, by id, with its bytes (to compare
        snapshots: ``before = h.session_files()`` … ``assert h.session_files() == before``)."""
        return {p.stem: p.read_bytes() for p in sorted(self.data_dir.glob("*.jsonl"))}

    async def stored_events(self, session_id: str) -> list[Event]:
        """The events of a stored session, read back from storage (a read-only ``inspect``)."""
        stored = await self.services.session_persistence.inspect(session_id)
        return list(stored.events)

    async def stored_messages(self, session_id: str, role: str | None = None) -> list[MessageEvent]:
        """The stored messages of ``session_id`` (of ``role`` only, when given)."""
        from host.sessions.model import MessageEvent

        return [
            e.body
            for e in await self.stored_events(session_id)
            if isinstance(e.body, MessageEvent) and role in (None, e.body.role)
        ]

    # -- closing -----------------------------------------------------------------------------

    def on_close(self, callback: Callable[[], object]) -> None:
        """Run ``callback`` when closing, before the host shuts down (e.g. release a held
        tool so that a failed test cannot hang the shutdown)."""
        self._on_close.append(callback)

    async def close(self) -> list[DisposalFailure]:
        """Run the ``on_close`` callbacks, then shut the host down; returns the plugins whose
        disposal failed. Later calls do nothing (and return no failure)."""
        if self._closed:
            return []
        self._closed = True
        for callback in self._on_close:
            callback()
        return await self.host.aclose()


class ApprovalsHandle:
    """A harness's hold on the ``approvals`` service (``HostHarness.approvals``).

    ``answer(Answer.approve())`` answers every request from now on (a function of the
    ``ApprovalRequest`` may decide each instead); ``asked`` lists the requests answered so
    far. Without it a call that needs approval waits for a user until the policy's timeout.
    """

    def __init__(self, service: ApprovalService) -> None:
        self.service = service
        self.asked: list[ApprovalRequest] = []
        self._stop: Callable[[], object] | None = None

    def answer(self, answer: Answer | Callable[[ApprovalRequest], Answer]) -> None:
        """Answer every request from now on with ``answer`` (or ``answer(request)``)."""

        async def handler(request: ApprovalRequest) -> Answer:
            self.asked.append(request)
            return answer(request) if callable(answer) else answer

        if self._stop is not None:
            self._stop()
        self._stop = self.service.on_request(handler)
