"""Shared helpers for the subagent service tests (no tests here).

``Env`` is a real host (``build_host``: every built-in plugin, JSONL persistence in tmp_path)
with the scripted model; test tools call the service the way the tool packages do. Nothing is
mocked and nothing waits on time: tests await Activations, turn ends and gates.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from host.agents import Agent, ScriptedModel
from host.app import Host
from host.sessions.model import InboxAccepted, MessageEvent, SubagentDescriptorEvent
from host.subagents.service import SubagentService
from host.subagents.types import ChildRequest
from host.testing import build_host
from host.tools import Tool, ToolExec, tool


@attrs.frozen
class TextArgs:
    """Arguments of the test tools."""

    text: str = attrs.field(metadata={"description": "the text"})


def report_tool(delivery: str = "next-step") -> Tool:
    """A ``report`` tool like the report package's: reports ``text`` to the direct parent."""

    @tool("report", "Report to your parent.", TextArgs)
    async def run(args: TextArgs, exec: ToolExec) -> str:
        service: SubagentService = exec.ctx.subagents
        message_id = await service.report_from(exec.agent, args.text, delivery=delivery)  # type: ignore[arg-type]
        return f"report accepted as message {message_id}"

    return run


def background_tool() -> Tool:
    """``background(text)``: start a continuable child labelled ``text`` with prompt ``text``."""

    @tool("background", "Start a background subagent.", TextArgs)
    async def run(args: TextArgs, exec: ToolExec) -> str:
        service: SubagentService = exec.ctx.subagents
        started = await service.start_continuable(
            "spawn", ChildRequest(prompt=args.text), parent=exec.agent, label=args.text
        )
        return f"started subagent {started.child_id}"

    return run


class Stubborn:
    """A tool that keeps running through an interrupt until released (holds a child closing)."""

    made: list[Stubborn] = []

    def __init__(self) -> None:
        Stubborn.made.append(self)
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


class Env:
    """One host over ``data_dir`` and handles on its services."""

    def __init__(self, data_dir: Path, environ: dict[str, str] | None = None) -> None:
        self.data_dir = data_dir
        self.host: Host = build_host(data_dir=data_dir, environ=environ)
        self.services = self.host.services

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

    def add_tool(self, made: Tool) -> None:
        self.host.tools.register(made.name, made, owner="test")

    async def root(self, label: str = "root") -> Agent:
        agent: Agent = await self.agents.create(label=label)
        return agent

    async def settled(self, child_id: str, *parents: Agent) -> None:
        """Wait until ``child_id`` is no longer resident, then until ``parents`` are idle."""
        manager = self.subagents.manager()
        assert manager is not None
        activation = manager.activation(child_id)
        if activation is not None:
            await activation.wait_done()
        for parent in parents:
            await parent.wait_idle()

    def session_files(self) -> set[str]:
        return {p.stem for p in self.data_dir.glob("*.jsonl")}

    async def close(self) -> None:
        await self.host.aclose()


@pytest.fixture(name="env")
async def env_fixture(tmp_path: Path) -> AsyncIterator[Env]:
    """An ``Env`` over ``tmp_path / "data"``, closed (and unstuck) after the test."""
    made = Env(tmp_path / "data")
    yield made
    for stubborn in Stubborn.made:  # never let a failed test hang the shutdown
        stubborn.release.set()
    await made.close()


def user_messages(agent: Agent) -> list[MessageEvent]:
    return [
        e.body
        for e in agent.session.events
        if isinstance(e.body, MessageEvent) and e.body.role == "user"
    ]


def accepted(agent: Agent) -> list[InboxAccepted]:
    return [e.body for e in agent.session.events if isinstance(e.body, InboxAccepted)]


def descriptor_seqs(events: Any) -> list[int]:
    return [e.seq for e in events if isinstance(e.body, SubagentDescriptorEvent)]
