"""The pytest plugin that ``agent-host-core`` ships for plugin authors (entry point ``pytest11``).

Fixtures:

* ``make_host(*plugins, builtins=True, config=None, environ=None)`` builds an isolated host
  from the plugin objects given (modules or objects with hook implementations; a plugin is
  named by its ``name`` attribute, else the last part of its module name, or pass
  ``(name, obj)`` pairs), plus the built-in service plugins unless ``builtins=False``. No
  entry points are scanned. Data lives in the test's ``tmp_path``. Every host made is closed
  after the test, which fails if a plugin's disposal failed then (one line per plugin).
* ``make_harness(*plugins, cls=HostHarness, data_dir=None, **options)`` makes a
  ``HostHarness`` (or the subclass ``cls``) the same way, in its own directory of
  ``tmp_path`` unless ``data_dir`` is given; every harness made is closed (asynchronously)
  after the test, failing it as ``make_host`` does.
* ``harness``: a ``HostHarness`` over the built-in plugins alone, closed after the test.

Helpers:

* ``build_host(*plugins, data_dir=…, builtins=True, config=None, environ=None)``: the started
  host the fixtures use.
* ``call_tool(host, name, args, agent=…)`` runs a global tool the way an agent does.
* ``HostHarness``: a started host plus what scenario tests reach for: the scripted model, the
  ``agents`` and ``subagents`` services, root agents, waiting until a child settles, the
  session files on disk and the events stored for a session.

The async fixtures need ``pytest-asyncio`` (``pip install agent-host-core[testing]``), in
either of its modes. In its default strict mode, a coroutine test that uses one of these
fixtures (directly or through the author's own fixtures) and has no ``asyncio`` marker gets
one (``pytest_pycollect_makeitem`` below), so ``async def test_x(harness): ...`` runs without
``asyncio_mode = "auto"``; other async tests are left to the author.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import pytest

from host.app import Host, HostSettings
from host.builtins import builtin_candidates
from host.plugins.discovery import PluginCandidate, from_object
from host.plugins.record import DisposalFailure
from host.plugins.selection import Selection
from host.tools.execute import run_tool
from host.tools.tool import Tool, ToolExec, ToolResult

if TYPE_CHECKING:  # the runtime stays unimported until a harness is used
    from host.agents.agent import Agent
    from host.agents.registry import AgentRegistry
    from host.agents.scripted import ScriptedModel
    from host.sessions.model import Event, MessageEvent
    from host.subagents.activation import Activation
    from host.subagents.manager import ContinuationManager
    from host.subagents.service import SubagentService

MakeHost = Callable[..., Host]
MakeHarness = Callable[..., "HostHarness"]
_F = TypeVar("_F", bound=Callable[..., Any])


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


@pytest.fixture
def make_host(tmp_path: Path) -> Iterator[MakeHost]:
    """Factory of isolated hosts; each is closed when the test ends."""
    made: list[Host] = []

    def make(*plugins: Any, **options: Any) -> Host:
        options.setdefault("data_dir", tmp_path / f"data{len(made)}")
        host = build_host(*plugins, **options)
        made.append(host)
        return host

    yield make
    _fail_on_disposal([failure for host in reversed(made) for failure in host.close()])


def _fail_on_disposal(failures: list[DisposalFailure]) -> None:
    """Fail the test (after everything was closed) when a plugin's disposal failed."""
    if failures:
        pytest.fail("\n".join(failure.line() for failure in failures), pytrace=False)


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

    def activation(self, child_id: str) -> Activation | None:
        """The resident activation of ``child_id``, or None when it is not resident."""
        return self.manager.activation(child_id)

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


def _async_fixture(function: _F) -> _F:
    """An async fixture that pytest-asyncio runs in any mode (a plain one without it)."""
    try:
        import pytest_asyncio
    except ImportError:  # pragma: no cover - async tests need pytest-asyncio anyway
        return cast(_F, pytest.fixture(function))
    return cast(_F, pytest_asyncio.fixture(function))


@_async_fixture
async def make_harness(tmp_path: Path) -> AsyncIterator[MakeHarness]:
    """Factory of ``HostHarness`` objects (``cls=`` a subclass); each is closed after the test."""
    made: list[HostHarness] = []

    def make(*plugins: Any, cls: type[HostHarness] = HostHarness, **options: Any) -> HostHarness:
        if options.get("data_dir") is None:
            options["data_dir"] = tmp_path / f"harness{len(made)}"
        harness = cls(*plugins, **options)
        made.append(harness)
        return harness

    yield make
    failures: list[DisposalFailure] = []
    for harness in reversed(made):
        failures += await harness.close() or []
    _fail_on_disposal(failures)


@_async_fixture
async def harness(make_harness: MakeHarness) -> HostHarness:
    """A ``HostHarness`` over the built-in plugins, closed after the test."""
    return make_harness()


FIXTURES = frozenset({"make_host", "make_harness", "harness"})
"""The fixtures whose coroutine tests get pytest-asyncio's marker in its strict mode."""


def _asyncio_strict(config: pytest.Config) -> bool:
    """Whether pytest-asyncio is loaded and in strict mode (its default)."""
    if not config.pluginmanager.hasplugin("asyncio"):
        return False
    mode = config.getoption("asyncio_mode", None) or config.getini("asyncio_mode")
    return bool(mode == "strict")


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_pycollect_makeitem(
    collector: pytest.Module | pytest.Class, name: str, obj: object
) -> Generator[None, Any, Any]:
    """Mark the coroutine tests that use ``FIXTURES`` with ``asyncio`` (strict mode only).

    pytest-asyncio turns a test into one it runs while it is collected, in its own wrapper of
    this hook, if the test has the marker by then; ``trylast`` makes this wrapper the inner
    one, so the marker is added first. ``fixturenames`` is the closure: fixtures used
    through other fixtures count. A test with a marker of its own keeps it, and in auto mode
    pytest-asyncio marks every coroutine test itself.
    """
    result = yield
    if not inspect.iscoroutinefunction(obj) or not _asyncio_strict(collector.config):
        return result
    for item in result if isinstance(result, list) else [result]:
        if (
            isinstance(item, pytest.Function)
            and item.get_closest_marker("asyncio") is None
            and not FIXTURES.isdisjoint(item.fixturenames)
        ):
            item.add_marker(pytest.mark.asyncio)
    return result
