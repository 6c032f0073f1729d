"""The pytest plugin that ``agent-host-core`` ships for plugin authors (entry point ``pytest11``).

Fixtures:

* ``make_host(*plugins, builtins=True, config=None, environ=None)`` builds an isolated host
  from the plugin objects given (modules or objects with hook implementations; a plugin is
  named by its ``name`` attribute, else the last part of its module name, or pass
  ``(name, obj)`` pairs), plus the built-in service plugins unless ``builtins=False``. No
  entry points are scanned. Data lives in the test's ``tmp_path``. Every host made is closed
  after the test.

Helpers: ``call_tool(host, name, args, agent=…)`` runs a global tool the way an agent does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from host.app import Host, HostSettings
from host.builtins import builtin_candidates
from host.plugins.discovery import PluginCandidate, from_object
from host.plugins.selection import Selection
from host.tools.execute import run_tool
from host.tools.tool import ToolExec, ToolResult

MakeHost = Callable[..., Host]


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
    for host in reversed(made):
        host.close()
