"""Helpers for the report plugin tests (no tests here).

``ReportEnv`` is a real host (``build_host``: every built-in plugin plus
``("subagent_report", tool_subagent_report.plugin)`` and any test plugins, JSONL persistence in
tmp_path) driven by the embedded scripted model. Children are started through the service's
``start_continuable`` (or the ``background`` test tool when a child starts a grandchild). Nothing
is mocked and nothing waits on time: tests await gates, Activations and turn ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
import tool_subagent_report.plugin as report_plugin

from host.agents import Agent, ModelRequest, ScriptedModel
from host.app import Host
from host.cancel import CancelSignal
from host.sessions.model import InboxAccepted, MessageEvent, TurnStart
from host.subagents.activation import Activation
from host.subagents.descriptors import ToolFilterSpec
from host.subagents.service import SubagentService
from host.subagents.types import ChildRequest
from host.testing import build_host
from host.tools import Tool, ToolExec, ToolResult, tool
from host.tools.execute import run_tool

PLUGIN = ("subagent_report", report_plugin)
FINISHED = "finished and will do no further work unless you send it more."


@attrs.frozen
class TextArgs:
    """Arguments of the test tools."""

    text: str = attrs.field(metadata={"description": "the text"})


def background_tool() -> Tool:
    """``background(text)``: start a continuable child labelled and prompted ``text``."""

    @tool("background", "Start a background subagent.", TextArgs)
    async def run(args: TextArgs, exec: ToolExec) -> str:
        service: SubagentService = exec.ctx.subagents
        started = await service.start_continuable(
            "spawn", ChildRequest(prompt=args.text), parent=exec.agent, label=args.text
        )
        return f"started subagent {started.child_id}"

    return run


@tool("echo", "Echo the text back.", TextArgs, concurrency_safe=True)
async def echo(args: TextArgs, exec: ToolExec) -> str:
    return args.text


class Gate:
    """Holds a scripted model call until ``open()``; records that it was entered."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self._open = asyncio.Event()

    def open(self) -> None:
        self._open.set()

    def reply(self, response: Any) -> Callable[[ModelRequest], Any]:
        async def held(request: ModelRequest) -> Any:
            self.entered.set()
            await self._open.wait()
            return response

        return held


class Stubborn:
    """A tool that keeps running through an interrupt until released (holds a child closing)."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.interrupted = asyncio.Event()
        self.release = asyncio.Event()

    def tool(self) -> Tool:
        @tool("stubborn", "Hold on.", TextArgs)
        async def run(args: TextArgs, exec: ToolExec) -> str:
            self.entered.set()
            try:
                await self.release.wait()
            except asyncio.CancelledError:
                self.interrupted.set()
                await self.release.wait()
            return "released"

        return run


class ReportEnv:
    """One host over ``data_dir`` with the report plugin (and ``extra`` plugins) loaded."""

    def __init__(
        self,
        data_dir: Path,
        *,
        config: Mapping[str, Any] | None = None,
        report: bool = True,
        before: tuple[Any, ...] = (),
        after: tuple[Any, ...] = (),
    ) -> None:
        self.data_dir = data_dir
        plugins = (*before, *((PLUGIN,) if report else ()), *after)
        self.host: Host = build_host(*plugins, data_dir=data_dir, config=config)
        self.services = self.host.services
        self.stubborn: list[Stubborn] = []

    # -- services ---------------------------------------------------------------------------

    @property
    def model(self) -> ScriptedModel:
        model = self.services.models.resolve("scripted")
        assert isinstance(model, ScriptedModel)
        return model

    @property
    def agents(self) -> Any:
        return self.services.agents

    @property
    def subagents(self) -> SubagentService:
        service = self.services.subagents
        assert isinstance(service, SubagentService)
        return service

    def plugin_row(self, name: str = "subagent_report") -> dict[str, Any]:
        return next(row for row in self.host.plugin_rows() if row["name"] == name)

    def add_tool(self, made: Tool) -> None:
        self.host.tools.register(made.name, made, owner="test")

    def add_stubborn(self) -> Stubborn:
        made = Stubborn()
        self.stubborn.append(made)
        self.add_tool(made.tool())
        return made

    # -- agents -----------------------------------------------------------------------------

    async def root(self, label: str = "root") -> Agent:
        agent: Agent = await self.agents.create(label=label)
        return agent

    async def start(
        self,
        parent: Agent,
        label: str = "bg",
        prompt: str = "go",
        *,
        allow: list[str] | None = None,
    ) -> Agent:
        """Start a continuable child of ``parent``; returns the live child agent."""
        tool_filter = ToolFilterSpec(allow=allow) if allow is not None else None
        started = await self.subagents.start_continuable(
            "spawn", ChildRequest(prompt, tool_filter=tool_filter), parent=parent, label=label
        )
        child = self.agents.get(started.child_id)
        assert child is not None
        return child  # type: ignore[no-any-return]

    def activation(self, child_id: str) -> Activation | None:
        manager = self.subagents.manager()
        assert manager is not None
        return manager.activation(child_id)

    async def settled(self, child_id: str, *parents: Agent) -> None:
        """Wait until ``child_id`` is no longer resident, then until ``parents`` are idle."""
        activation = self.activation(child_id)
        if activation is not None:
            await activation.wait_done()
        for parent in parents:
            await parent.wait_idle()

    async def run_report(
        self, tool_owner: Agent, caller: Any, output: Any, *, signal: CancelSignal | None = None
    ) -> ToolResult:
        """Run the ``report`` tool found in ``tool_owner``'s scope with ``caller`` as the agent."""
        found = tool_owner.tools.get("report")
        assert found is not None
        exec = ToolExec(agent=caller, ctx=self.services, signal=signal or CancelSignal())
        return await run_tool(found, "report", {"output": output}, exec)

    def log_path(self, session_id: str) -> Path:
        return self.data_dir / f"{session_id}.jsonl"

    async def close(self) -> None:
        for held in self.stubborn:  # never let a failed test hang the shutdown
            held.release.set()
        await self.host.aclose()


# -- accessors ---------------------------------------------------------------------------------


def user_messages(agent: Agent) -> list[MessageEvent]:
    return [
        e.body
        for e in agent.session.events
        if isinstance(e.body, MessageEvent) and e.body.role == "user"
    ]


def tool_messages(agent: Agent) -> list[MessageEvent]:
    return [
        e.body
        for e in agent.session.events
        if isinstance(e.body, MessageEvent) and e.body.role == "tool"
    ]


def accepted(agent: Agent) -> list[InboxAccepted]:
    return [e.body for e in agent.session.events if isinstance(e.body, InboxAccepted)]


def turn_starts(agent: Agent) -> int:
    return sum(1 for e in agent.session.events if isinstance(e.body, TurnStart))


def tool_names(request: ModelRequest) -> list[str]:
    return [spec.name for spec in request.tools]


def user_texts(request: ModelRequest) -> list[str]:
    return [m.content for m in request.messages if m.role == "user"]


def frame(child_id: str, output: str) -> str:
    return f"Background subagent {child_id} reported:\n{output}"


def source(child_id: str) -> dict[str, str]:
    return {"kind": "subagent-report", "sender_session_id": child_id}


def accepted_text(message_id: str) -> str:
    return f"report accepted by the agent that started you as message {message_id}"


async def stored_messages(env: ReportEnv, session_id: str, role: str) -> list[MessageEvent]:
    """The messages of ``role`` in the durable log of ``session_id`` (read back from disk)."""
    stored = await env.services.session_persistence.inspect(session_id)
    return [
        e.body for e in stored.events if isinstance(e.body, MessageEvent) and e.body.role == role
    ]
