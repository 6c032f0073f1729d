"""``agent-host run "prompt"`` and ``agent-host chat``: talk to a root agent.

Both use the configured model (e.g. the ``openai`` plugin) and fall back to the keyless
scripted model with a notice. Answers are printed as each root turn ends, including the turns
that reports and settlement notices of background subagents start; while subagents work, a
progress line says how many are still running.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any, TextIO

from host.agents.agent import Agent
from host.agents.driver import TurnOutcome
from host.app import Host

SCRIPTED_NOTICE = (
    "agent-host: notice: no model is configured, so the keyless scripted model answers "
    "(configure one: OPENAI_BASE_URL and AGENT_HOST_MODEL, or [plugins.openai] in agent-host.toml)"
)


class Conversation:
    """A root agent plus printing of its answers and of subagent progress."""

    def __init__(self, host: Host, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> None:
        self.host = host
        self.out = out
        self.err = err
        self.root: Agent | None = None
        self.failed = False

    async def open(self) -> Agent:
        """Create the root agent (announcing the scripted fallback when it applies)."""
        models = self.host.services.models
        if models.default_name == "scripted":
            print(SCRIPTED_NOTICE, file=self.err)
        self.root = await self.host.services.agents.create(label="user")
        self.root.on_turn_end(self._print_answer)
        return self.root

    def _print_answer(self, outcome: TurnOutcome) -> None:
        if outcome.last_answer:
            print(outcome.last_answer, file=self.out, flush=True)
        if outcome.stop_reason != "completed":
            self.failed = True
            detail = f": {outcome.error}" if outcome.error else ""
            print(f"agent-host: turn ended ({outcome.stop_reason}){detail}", file=self.err)

    async def say(self, text: str) -> None:
        """Send one user message and wait until the root and its subagents are quiet."""
        assert self.root is not None
        self.root.followup(text)
        await self.quiesce()

    async def quiesce(self) -> None:
        """Wait for the root to be idle with no resident subagent; report progress meanwhile."""
        assert self.root is not None
        while True:
            await self.root.wait_idle()
            manager = self._manager()
            residents = manager.residents() if manager else []
            if not residents and self.root.status == "idle":
                return
            if residents:
                print(f"… {len(residents)} subagent(s) working", file=self.err, flush=True)
                await asyncio.wait(
                    [asyncio.ensure_future(a.wait_done()) for a in residents],
                    return_when=asyncio.FIRST_COMPLETED,
                )

    def _manager(self) -> Any:
        subagents = self.host.services.find("subagents")
        return subagents.manager() if subagents is not None else None


async def run_once(host: Host, prompt: str) -> int:
    """``agent-host run``: one message, every answer printed; exit 1 if a turn failed."""
    conversation = Conversation(host)
    await conversation.open()
    try:
        await conversation.say(prompt)
    finally:
        await host.aclose()
    return 1 if conversation.failed else 0


async def chat(host: Host, lines: TextIO = sys.stdin) -> int:
    """``agent-host chat``: one message per line until end of input or ``/exit``."""
    conversation = Conversation(host)
    await conversation.open()
    try:
        while True:
            print("you> ", end="", flush=True)
            line = await asyncio.to_thread(lines.readline)
            if not line or line.strip() == "/exit":
                break
            if line.strip():
                await conversation.say(line.strip())
    finally:
        await host.aclose()
    return 0
