"""A real host for the reliability tests (no tests here).

``Tree`` is a host made by ``build_host`` from every built-in plugin plus the control root and
list plugins and the report plugin, JSONL persistence in a temporary directory and the
scripted model. Children start through the service's ``start_continuable``; a child whose
label is ``held`` in ``Tree.child`` waits in its first model call until released, so it stays
resident and running. Tools are run exactly as a turn runs them (``run_tool``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tool_subagent_report.plugin as report_plugin

from host.agents import Agent, ModelRequest, say
from host.plugins.record import DisposalFailure
from host.subagents.types import ChildRequest
from host.testing import HostHarness
from host.tools import ToolExec, ToolResult
from host.tools.execute import run_tool
from tool_subagent_control import listing, root

PLUGINS = (
    ("subagent_control", root),
    ("list_agents", listing),
    ("subagent_report", report_plugin),
)
QUIET = {"plugins": {"subagent_report": {"delivery": "quiet"}}}


class Tree(HostHarness):
    """One host over ``data_dir`` (module docstring)."""

    def __init__(
        self,
        data_dir: Path,
        *,
        config: Mapping[str, Any] | None = None,
        environ: Mapping[str, str] | None = None,
        extra: tuple[Any, ...] = (),
    ) -> None:
        super().__init__(*extra, *PLUGINS, data_dir=data_dir, config=config, environ=environ)
        self.release = asyncio.Event()
        self.on_close(self.release.set)

    async def child(self, parent: Agent, label: str, *, held: bool = True) -> Agent:
        """A continuable child of ``parent``; ``held``: its first model call waits for
        ``self.release`` (it stays resident and running), else it answers at once."""
        if held:
            entered = asyncio.Event()
            release = self.release

            async def hold(request: ModelRequest) -> Any:
                entered.set()
                await release.wait()
                return say(f"{label} done")

            self.model.script(label, hold)
        else:
            self.model.script(label, say(f"{label} done"))
        started = await self.subagents.start_continuable(
            "spawn", ChildRequest(prompt=f"work as {label}"), parent=parent, label=label
        )
        agent = self.agents.get(started.child_id)
        assert agent is not None
        if held:
            await entered.wait()
        return agent

    async def tool(
        self, name: str, args: Any, agent: Any, *, scope_of: Agent | None = None
    ) -> ToolResult:
        """Run tool ``name`` as ``agent`` would; ``scope_of``: take it from that agent's own
        scope (``report`` is installed per child), else from the global tools."""
        found = (scope_of.tools if scope_of is not None else self.host.tools).get(name)
        exec = ToolExec(agent=agent, ctx=self.services, tool_call_id="call-audit")
        return await run_tool(found, name, args, exec)

    def files(self) -> dict[str, bytes]:
        """Every file under the data directory's parent (the whole test area), with bytes."""
        base = self.data_dir.parent
        return {
            str(p.relative_to(base)): p.read_bytes() for p in sorted(base.rglob("*")) if p.is_file()
        }

    async def aclose(self) -> list[DisposalFailure]:
        """Release held tools, shut the host down; the plugins whose disposal failed."""
        return await self.close()
