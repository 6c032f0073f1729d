"""Helpers for the agent tests: test tools and event kinds (``Gate``, ``bodies``,
``stop_reasons`` and ``user_texts`` are in ``tests.support``)."""

from __future__ import annotations

import attrs

from host.sessions.model import Event, MessageEvent
from host.tools import Tool, ToolExec, tool
from tests.support import Gate


@attrs.frozen
class TextArgs:
    """Arguments of the test tools."""

    text: str = attrs.field(metadata={"description": "what to echo"})


@tool("echo", "Echo the text back in capitals.", TextArgs, concurrency_safe=True)
async def echo(args: TextArgs, exec: ToolExec) -> str:
    return args.text.upper()


def gated_tool(name: str, gate: Gate, *, concurrency_safe: bool = False) -> Tool:
    """A tool that holds on ``gate`` (recording the call's signal), then returns ``done``."""

    @tool(name, f"The {name} tool.", TextArgs, concurrency_safe=concurrency_safe)
    async def held(args: TextArgs, exec: ToolExec) -> str:
        await gate.hold(exec.signal)
        return "done"

    return held


def kinds(events: list[Event]) -> list[str]:
    """Compact event kinds (``message`` shown with its role) for order assertions."""
    return [
        f"message/{e.body.role}" if isinstance(e.body, MessageEvent) else e.kind for e in events
    ]
