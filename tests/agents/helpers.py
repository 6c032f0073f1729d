"""Helpers for the agent tests: test tools, ``Gate`` (holds a model call or tool in flight
until the test releases it, so tests never depend on timing) and event accessors."""

from __future__ import annotations

import asyncio
from typing import Any

import attrs

from host.agents import Agent, ModelRequest, ModelResponse
from host.cancel import CancelSignal
from host.sessions.model import Event, MessageEvent, TurnEnd
from host.tools import Tool, ToolExec, tool


@attrs.frozen
class TextArgs:
    """Arguments of the test tools."""

    text: str = attrs.field(metadata={"description": "what to echo"})


@tool("echo", "Echo the text back in capitals.", TextArgs, concurrency_safe=True)
async def echo(args: TextArgs, exec: ToolExec) -> str:
    return args.text.upper()


class Gate:
    """Holds a coroutine until ``open()``; records that it was entered and whether cancelled."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self._open = asyncio.Event()
        self.cancelled = False
        self.signal: CancelSignal | None = None

    def open(self) -> None:
        """Let the held coroutine continue."""
        self._open.set()

    async def hold(self, signal: CancelSignal | None = None) -> None:
        """Enter, then wait for ``open()``; a cancellation is recorded and re-raised."""
        self.signal = signal
        self.entered.set()
        try:
            await self._open.wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise

    def reply(self, response: ModelResponse) -> Any:
        """A scripted-model entry that holds the model call, then answers ``response``."""

        async def held(request: ModelRequest) -> ModelResponse:
            await self.hold()
            return response

        return held


def gated_tool(name: str, gate: Gate, *, concurrency_safe: bool = False) -> Tool:
    """A tool that holds on ``gate`` (recording the call's signal), then returns ``done``."""

    @tool(name, f"The {name} tool.", TextArgs, concurrency_safe=concurrency_safe)
    async def held(args: TextArgs, exec: ToolExec) -> str:
        await gate.hold(exec.signal)
        return "done"

    return held


def bodies(agent: Agent, kind: type) -> list[Any]:
    """The bodies of ``agent``'s events of one type, in order."""
    return [e.body for e in agent.session.events if isinstance(e.body, kind)]


def stop_reasons(agent: Agent) -> list[str]:
    """The stop reasons of the agent's turns so far."""
    return [end.stop_reason for end in bodies(agent, TurnEnd)]


def user_texts(request: ModelRequest) -> list[str]:
    """The user messages a model request carried."""
    return [m.content for m in request.messages if m.role == "user"]


def kinds(events: list[Event]) -> list[str]:
    """Compact event kinds (``message`` shown with its role) for order assertions."""
    return [
        f"message/{e.body.role}" if isinstance(e.body, MessageEvent) else e.kind for e in events
    ]
