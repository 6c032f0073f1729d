"""Helpers for the hot-reload tests: plugin sources written to disk, a host over them, a
scripted agent that calls a tool, and accessors. Nothing waits on time."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from host.agents import Agent, call, say
from host.app import Host
from host.naming import Owner
from host.plugins.discovery import discover
from host.testing import build_host, call_tool
from tests.support import scripted, tool_results

HEADER = """
import attrs
from host import hookimpl
from host.tools import tool

requires = {requires!r}

@attrs.frozen
class Args:
    pass
"""

TOOL = """
@tool({name!r}, "The {name} tool.", Args)
async def tool_{name}(args, exec):
    return {text!r}
"""

REGISTER = """
@hookimpl
def register_tools(register):
{lines}
"""


def tools_source(tools: dict[str, str], *, requires: tuple[str, ...] = (), extra: str = "") -> str:
    """A plugin module registering one tool per ``name → text`` (each returns its text)."""
    parts = [HEADER.format(requires=requires)]
    parts += [TOOL.format(name=name, text=text) for name, text in tools.items()]
    lines = "\n".join(f"    register(tool_{name})" for name in tools) or "    pass"
    parts.append(REGISTER.format(lines=lines))
    return "".join(parts) + textwrap.dedent(extra)


class Plugins:
    """Throwaway plugin distributions in the test's site directory, editable in place."""

    def __init__(self, site: Callable[..., str], unique: Callable[[str], str], root: Path):
        self._site = site
        self._unique = unique
        self.directory = root / "site"
        self.modules: dict[str, str] = {}

    def install(self, plugin: str, source: str) -> str:
        """Install a one-module distribution whose entry point ``plugin`` is that module."""
        module = self._unique(plugin)
        self._site(entry_points={plugin: module}, modules={module: source})
        self.modules[plugin] = module
        return module

    def path(self, plugin: str) -> Path:
        """The module file of ``plugin``."""
        return self.directory / f"{self.modules[plugin]}.py"

    def write(self, plugin: str, source: str) -> Path:
        """Replace ``plugin``'s module with ``source``; returns the path written."""
        path = self.path(plugin)
        path.write_text(textwrap.dedent(source), encoding="utf-8")
        return path


def open_host(data_dir: Path, names: set[str], *extra: Any) -> Host:
    """Built-ins, the installed plugins named, and any plugin objects/pairs in ``extra``."""
    candidates = [c for c in discover() if c.name in names]
    return build_host(*extra, *candidates, data_dir=data_dir)


async def ask_to_call(host: Host, tool: str, label: str, agent: Agent | None = None) -> Agent:
    """A scripted agent (new unless given) calls ``tool`` once, then answers; waits idle."""
    scripted(host).script(label, call(tool), say("done"))
    if agent is None:
        agent = await host.services.agents.create(label=label)
    agent.followup(f"call {tool}")
    await agent.wait_idle()
    return agent


async def text_of(host: Host, tool: str) -> str:
    """The text ``tool``, called without arguments, answers."""
    return (await call_tool(host, tool, {}, agent=object())).text


def last_result(agent: Agent) -> tuple[str, bool]:
    return tool_results(agent)[-1]


def offered(host: Host, label: str) -> list[str]:
    """The tool names the model was offered in the last request for ``label``."""
    return [spec.name for spec in scripted(host).requests_for(label)[-1].tools]


def plugin_tools(host: Host, plugin: str) -> list[str]:
    """The global tools ``plugin`` owns, per the host's registry."""
    owner = Owner(plugin)
    return sorted(name for name, _ in host.tools.items() if host.tools.owner(name) == owner)
