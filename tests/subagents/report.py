"""The harness of the report plugin tests (no tests here).

``ReportEnv`` is a ``HostHarness`` (``host.testing``: a real host of every built-in plugin plus
``("subagent_report", tool_subagent_report.plugin)`` and any test plugins, JSONL persistence in
tmp_path) driven by the embedded scripted model. Children are started through the service's
``start_continuable`` (or the ``background`` test tool when a child starts a grandchild). Nothing
is mocked and nothing waits on time: tests await gates, child activations and turn ends.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tool_subagent_report.plugin as report_plugin

from host.agents import Agent, ModelRequest
from host.cancel import CancelSignal
from host.subagents.types import ChildRequest
from host.testing import HostHarness
from host.tools import ToolExec, ToolResult, tool
from host.tools.execute import run_tool
from host.tools.filter import ToolFilter
from tests.scenarios import Stubborn, TextArgs
from tests.support import plugin_row

PLUGIN = ("subagent_report", report_plugin)
FINISHED = "finished and will do no further work unless you send it more."


@tool("echo", "Echo the text back.", TextArgs, concurrency_safe=True)
async def echo(args: TextArgs, exec: ToolExec) -> str:
    return args.text


class ReportEnv(HostHarness):
    """A harness over ``data_dir`` with the report plugin (and ``before``/``after`` plugins)."""

    def __init__(
        self,
        data_dir: Path,
        *,
        config: Mapping[str, Any] | None = None,
        report: bool = True,
        before: tuple[Any, ...] = (),
        after: tuple[Any, ...] = (),
    ) -> None:
        plugins = (*before, *((PLUGIN,) if report else ()), *after)
        super().__init__(*plugins, data_dir=data_dir, config=config)

    def plugin_row(self, name: str = "subagent_report") -> dict[str, Any]:
        return plugin_row(self.host, name)

    def add_stubborn(self) -> Stubborn:
        made = Stubborn()
        self.on_close(made.release.set)  # never let a failed test hang the shutdown
        self.add_tool(made.tool())
        return made

    async def start(
        self,
        parent: Agent,
        label: str = "bg",
        prompt: str = "go",
        *,
        allow: list[str] | None = None,
    ) -> Agent:
        """Start a continuable child of ``parent``; returns the live child agent."""
        tool_filter = ToolFilter(allow=allow) if allow is not None else None
        started = await self.subagents.start_continuable(
            "spawn", ChildRequest(prompt, tool_filter=tool_filter), parent=parent, label=label
        )
        child = self.agents.get(started.child_id)
        assert child is not None
        return child

    async def run_report(
        self, tool_owner: Agent, caller: Any, output: Any, *, signal: CancelSignal | None = None
    ) -> ToolResult:
        """Run the ``report`` tool found in ``tool_owner``'s scope with ``caller`` as the agent."""
        found = tool_owner.tools.get("report")
        assert found is not None
        exec = ToolExec(agent=caller, ctx=self.services, signal=signal or CancelSignal())
        return await run_tool(found, "report", {"output": output}, exec)


# -- accessors ---------------------------------------------------------------------------------


def tool_names(request: ModelRequest) -> list[str]:
    return [spec.name for spec in request.tools]


def frame(child_id: str, output: str) -> str:
    return f"Background subagent {child_id} reported:\n{output}"


def source(child_id: str) -> dict[str, str]:
    return {"kind": "subagent-report", "sender_session_id": child_id}


def accepted_text(message_id: str) -> str:
    return f"report accepted by the agent that started you as message {message_id}"
