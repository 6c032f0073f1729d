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
  ``tmp_path`` unless ``data_dir`` is given. It is a plain function (no ``await``); the
  fixture itself is async, because every harness made is closed asynchronously after the
  test (failing it as ``make_host`` does), so a test using it is an ``async def`` test.
  Both factories are typed (``MakeHost``, ``MakeHarness``): a misspelt option is a mypy
  error.
* ``harness``: a ``HostHarness`` over the built-in plugins alone, closed after the test.

Helpers (defined in ``host.harness``, re-exported here):

* ``build_host(*plugins, data_dir=…, builtins=True, config=None, environ=None)``: the started
  host the fixtures use.
* ``call_tool(host, name, args, agent=…)`` runs a global tool the way an agent does.
* ``HostHarness``: a started host plus what scenario tests reach for: the scripted model, the
  ``agents`` and ``subagents`` services, root agents, waiting until a child settles, the
  session files on disk, the events stored for a session, and ``approvals``
  (``h.approvals.answer(Answer.approve())``), without which a call of an approval-gated tool
  waits for a user until the policy's timeout.
* ``call``, ``calls``, ``say``, ``tool_call`` (the scripted model's entries, from
  ``host.agents.scripted``) and ``Answer`` (``host.approvals.requests``), re-exported typed.

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
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, TypeVar, Unpack, cast, overload

import pytest

from host.app import Host
from host.harness import ApprovalsHandle as ApprovalsHandle
from host.harness import HostHarness as HostHarness
from host.harness import build_host as build_host
from host.harness import call_tool as call_tool
from host.harness import plugin_name as plugin_name
from host.lazy import lazy_attributes
from host.plugins.record import DisposalFailure

if TYPE_CHECKING:  # the runtime stays unimported until a harness is used
    from host.agents.scripted import call as call
    from host.agents.scripted import calls as calls
    from host.agents.scripted import say as say
    from host.agents.scripted import tool_call as tool_call
    from host.approvals.requests import Answer as Answer

_F = TypeVar("_F", bound=Callable[..., Any])
_H = TypeVar("_H", bound="HostHarness")


__getattr__ = lazy_attributes(
    __name__,
    {
        "Answer": "host.approvals.requests",
        **dict.fromkeys(("call", "calls", "say", "tool_call"), "host.agents.scripted"),
    },
)
"""The re-exported names (``call``, ``say`` …, ``Answer``), imported on first use."""


class HostOptions(TypedDict, total=False):
    """The options of ``make_host`` and ``make_harness`` (those of ``build_host``)."""

    data_dir: Path | None
    builtins: bool
    config: Mapping[str, Any] | None
    environ: Mapping[str, str] | None


class MakeHost(Protocol):
    """The ``make_host`` fixture: ``make_host(*plugins, builtins=…, config=…, environ=…,
    data_dir=…)``, a started host closed after the test."""

    def __call__(self, *plugins: object, **options: Unpack[HostOptions]) -> Host: ...


class MakeHarness(Protocol):
    """The ``make_harness`` fixture (a plain function): ``make_harness(*plugins, …)`` is a
    ``HostHarness``, ``make_harness(*plugins, cls=Sub, …)`` a ``Sub``."""

    @overload
    def __call__(self, *plugins: object, **options: Unpack[HostOptions]) -> HostHarness: ...

    @overload
    def __call__(
        self, *plugins: object, cls: type[_H], **options: Unpack[HostOptions]
    ) -> _H: ...


@pytest.fixture
def make_host(tmp_path: Path) -> Iterator[MakeHost]:
    """Factory of isolated hosts; each is closed when the test ends."""
    made: list[Host] = []

    def make(
        *plugins: object,
        data_dir: Path | None = None,
        builtins: bool = True,
        config: Mapping[str, Any] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Host:
        directory = data_dir or tmp_path / f"data{len(made)}"
        host = build_host(
            *plugins, data_dir=directory, builtins=builtins, config=config, environ=environ
        )
        made.append(host)
        return host

    yield make
    _fail_on_disposal([failure for host in reversed(made) for failure in host.close()])


def _fail_on_disposal(failures: list[DisposalFailure]) -> None:
    """Fail the test (after everything was closed) when a plugin's disposal failed."""
    if failures:
        pytest.fail("\n".join(failure.line() for failure in failures), pytrace=False)


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

    yield cast(MakeHarness, make)
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
