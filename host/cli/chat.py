"""``agent-host run "prompt"`` and ``agent-host chat``: talk to a root agent.

Both use the configured model (e.g. the ``openai`` plugin) and fall back to the keyless
scripted model with a notice; a failed plugin that registers models stops them before any
agent starts, and ``--script`` makes the scripted model answer from a file. The root agent's
text is printed as it streams, each model call on its own line, including the turns that
reports and settlement notices of background subagents start; while subagents work, a
progress line says how many are still running. Each failed plugin is a warning line at the
start (``warn_failed_plugins``), not news first heard as an agent's ``unknown tool``.
Approval requests and ``ask_user`` questions from any agent of the tree are asked at the
terminal, or denied when there is none (``host.cli.approve``).
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Any, TextIO

from host.agents.agent import Agent
from host.agents.driver import TurnOutcome
from host.agents.models import ModelResponse, StreamEvent, TextDelta
from host.app import Host
from host.cli import render
from host.cli.approve import Lines, listen
from host.cli.model_choice import refuse_failed_model_plugins

if TYPE_CHECKING:
    from host.cli.script_file import Script
    from host.disposal import Disposer

PROMPT = "you> "
ROOT_LABEL = "user"
"""The label of the agent a person talks to (``--script`` files address it by this name)."""

SCRIPTED_NOTICE = (
    "agent-host: notice: no model is configured, so the keyless scripted model answers "
    "(configure one: OPENAI_BASE_URL and AGENT_HOST_MODEL, or [plugins.openai] in agent-host.toml)"
)


def warn_failed_plugins(host: Host, err: TextIO) -> None:
    """One ``agent-host: warning: plugin NAME failed: ERROR`` line per failed plugin: said at
    the start of a command that runs agents, not first when an agent calls a missing tool."""
    for failure in render.failed_plugins(host.plugin_rows()):
        print(f"agent-host: warning: {failure}", file=err)


class AnswerPrinter:
    """A stream listener printing a model call's text as it arrives, then ending its line.

    Text deltas are written at once; a response none of whose text was streamed (a model that
    does not stream) is written whole. A call that printed nothing prints no line.
    """

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self._streamed = False
        self._line_open = False

    def __call__(self, event: StreamEvent) -> None:
        if isinstance(event, TextDelta):
            self._write(event.text)
            self._streamed = self._streamed or bool(event.text)
        elif isinstance(event, ModelResponse):
            if not self._streamed:
                self._write(event.text)
            self._streamed = False
            self.end_line()

    def end_line(self) -> None:
        """Finish the line a call left open (also after a stream cut short)."""
        if self._line_open:
            self._write("\n")

    def _write(self, text: str) -> None:
        if text:
            self.out.write(text)
            self.out.flush()
            self._line_open = not text.endswith("\n")


class Conversation:
    """A root agent plus printing of its answers and of subagent progress; ``lines`` (stdin
    by default) are the person's, read for the conversation and for approval requests."""

    def __init__(
        self,
        host: Host,
        out: TextIO = sys.stdout,
        err: TextIO = sys.stderr,
        *,
        script: Script | None = None,
        lines: Lines | None = None,
    ) -> None:
        self.host = host
        self.out = out
        self.err = err
        self.script = script
        self.lines = lines if lines is not None else Lines(sys.stdin)
        self._stop_asking: Disposer | None = None
        self.printer = AnswerPrinter(out)
        self.root: Agent | None = None
        self.failed = False

    def choose_model(self) -> None:
        """Queue the ``--script`` entries; without a script, refuse to start when a plugin
        that registers models failed. Then warn of every failed plugin, and announce the
        scripted fallback when it applies."""
        models = self.host.services.models
        if self.script is not None:
            from host.cli.script_file import install

            install(self.script, models)
        else:
            refuse_failed_model_plugins(self.host)
        warn_failed_plugins(self.host, self.err)
        if self.script is None and models.default_name == "scripted":
            print(SCRIPTED_NOTICE, file=self.err)

    async def open(self) -> Agent:
        """Choose the model, then create the root agent."""
        self.choose_model()
        return self.attach(await self.host.services.agents.create(label=ROOT_LABEL))

    def attach(self, root: Agent) -> Agent:
        """Make ``root`` the agent talked to: print its text and how its turns end, and ask
        the approval requests of its tree."""
        self.root = root
        root.on_stream(self.printer)
        root.on_turn_end(self._turn_ended)
        approvals = self.host.services.find("approvals")
        if approvals is not None and self._stop_asking is None:
            self._stop_asking = listen(
                approvals,
                self.lines,
                self.out,
                self.err,
                before=self.printer.end_line,
                prompt=PROMPT,
            )
        return root

    def _turn_ended(self, outcome: TurnOutcome) -> None:
        self.printer.end_line()
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

    async def close(self) -> int:
        """Shut the host down; the exit code: 1 if a turn failed, else 0.

        Script entries no agent asked for are a warning: a label may be misspelt.
        """
        if self.script is not None:
            from host.cli.script_file import unused

            left = unused(self.host.services.models)
            if left:
                print(f"agent-host: warning: {left}", file=self.err)
        if self._stop_asking is not None:
            self._stop_asking()
        await self.host.aclose()
        return 1 if self.failed else 0

    def _manager(self) -> Any:
        subagents = self.host.services.find("subagents")
        return subagents.manager() if subagents is not None else None


async def run_once(host: Host, prompt: str, script: Script | None = None) -> int:
    """``agent-host run``: one message, every answer printed; exit 1 if a turn failed."""
    conversation = Conversation(host, script=script)
    await conversation.open()
    try:
        await conversation.say(prompt)
    finally:
        code = await conversation.close()
    return code


async def chat(host: Host, lines: TextIO = sys.stdin, script: Script | None = None) -> int:
    """``agent-host chat``: one message per line until end of input or ``/exit``; exit 1 if
    a turn failed. A line typed while an approval request is asked answers the request."""
    conversation = Conversation(host, script=script, lines=Lines(lines))
    await conversation.open()
    try:
        while True:
            print(PROMPT, end="", flush=True)
            line = await conversation.lines.get()
            if not line or line.strip() == "/exit":
                break
            if line.strip():
                await conversation.say(line.strip())
    finally:
        code = await conversation.close()
    return code
