"""Test tools and accessors shared by the scenario suites (subagents service, report plugin).

``background_tool`` starts a continuable child the way a delegation tool does; ``Stubborn``
holds a tool call through an interrupt until released (so a child stays closing); the
accessors read a live agent's session events.
"""

from __future__ import annotations

import asyncio

import attrs

from host.agents import Agent
from host.sessions.model import MessageEvent
from host.subagents.service import SubagentService
from host.subagents.types import ChildRequest
from host.tools import Tool, ToolExec, tool


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


class Stubborn:
    """A tool that keeps running through an interrupt until released (holds a child closing).

    Every one made is kept in ``Stubborn.made`` so a fixture can release them all.
    """

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


def user_messages(agent: Agent) -> list[MessageEvent]:
    return [
        e.body
        for e in agent.session.events
        if isinstance(e.body, MessageEvent) and e.body.role == "user"
    ]
