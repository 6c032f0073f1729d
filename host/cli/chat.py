"""``agent-host run "prompt"`` and ``agent-host chat``: talk to a root agent.

Both use the configured model (e.g. the ``openai`` plugin) and fall back to the keyless
scripted model with a notice; a failed plugin that registers models stops them before any
agent starts, and ``--script`` makes the scripted model answer from a file. The root agent's
text is printed as it streams, each model call on its own line, including the turns that
reports and settlement notices of background subagents start; while subagents work, a
progress line says how many are still running. Each failed plugin, and each left inactive by a
missing service, is a warning line at the start (``warn_unavailable_plugins``), not news first
heard as an agent's ``unknown tool``.
Approval requests and ``ask_user`` questions from any agent of the tree are asked at the
terminal, or denied when there is none (``host.cli.approve``).

That is the plain front (``PlainFront``): ``run``, and ``chat`` over pipes or with
``--plain``, where lines starting with ``/`` are slash commands (``host.cli.slash``). On a
terminal ``chat`` is the terminal client instead (``host.cli.terminal``).
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from host.agents.agent import Agent
from host.agents.driver import TurnOutcome
from host.agents.models import ModelResponse, StreamEvent, TextDelta
from host.app import Host
from host.cli import render
from host.cli.approve import Lines, TerminalAsker, listen
from host.cli.model_choice import refuse_failed_model_plugins
from host.cli.slash import SlashCommands, is_command, is_read_only, print_reply
from host.cli.transcript import tool_parts
from host.clients.commands import Commands
from host.clients.events import ClientEvent, ItemCompleted
from host.clients.feed import Feed

if TYPE_CHECKING:
    from host.cli.script_file import ScriptFile
    from host.disposal import Disposer

PROMPT = "you> "

SCRIPTED_NOTICE = (
    "agent-host: notice: no model is configured, so the keyless scripted model answers "
    "(configure one: OPENAI_BASE_URL and AGENT_HOST_MODEL, or [plugins.openai] in agent-host.toml)"
)


def warn_unavailable_plugins(host: Host, err: TextIO) -> None:
    """One ``agent-host: warning: plugin NAME failed: ERROR`` (or ``plugin NAME inactive:
    missing services: A``) line per plugin that failed or misses a service: said at the start
    of a command that runs agents, not first when an agent calls a missing tool."""
    for problem in render.unavailable_plugins(host.plugin_rows()):
        print(f"agent-host: warning: {problem}", file=err)


def choose_model(host: Host, script: ScriptFile | None, err: TextIO) -> None:
    """Queue the ``--script`` entries; without a script, refuse to start when a plugin that
    registers models failed. Then warn of every failed or inactive plugin, and announce the
    scripted fallback when it applies."""
    models = host.services.models
    if script is not None:
        from host.cli.script_file import install

        install(script, models)
    else:
        refuse_failed_model_plugins(host)
    warn_unavailable_plugins(host, err)
    if script is None and models.default_name == "scripted":
        print(SCRIPTED_NOTICE, file=err)


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

    def end_turn(self) -> None:
        """A turn ended, perhaps with its stream cut short: end the line it left open; the
        next response is new text, streamed or not."""
        self._streamed = False
        self.end_line()

    def _write(self, text: str) -> None:
        if text:
            self.out.write(text)
            self.out.flush()
            self._line_open = not text.endswith("\n")


class Front(Protocol):
    """How a conversation is shown and its approval requests asked: ``PlainFront`` (lines,
    pipes too) or the terminal client (``host.cli.terminal.front``). ``failed`` says whether
    a turn failed (the exit code of pipe mode)."""

    failed: bool

    async def attach(self, root: Agent) -> None:
        """Start showing ``root``."""

    def close(self) -> None:
        """Stop showing (idempotent)."""


class PlainFront:
    """Plain lines: the root's text as it streams; with ``show_tools`` (``run``), on stderr
    each of its tool calls and the first line of each result (``⏺ name {…}`` / ``  ⎿ …``,
    as the terminal client shows them, so a model that loops is visible); and
    ``agent-host: turn ended (…)`` for a turn that did not complete (``agent-host: answer cut
    at max_tokens (N)`` for one cut at the model's token limit); approval requests asked on
    ``lines`` (or denied without a terminal: ``host.cli.approve``), where the commands that
    only look still run once ``commands`` is set (``plain_chat`` sets it)."""

    def __init__(
        self, host: Host, out: TextIO, err: TextIO, lines: Lines, *, show_tools: bool = False
    ) -> None:
        self.host = host
        self.show_tools = show_tools
        self.out = out
        self.err = err
        self.lines = lines
        self.printer = AnswerPrinter(out)
        self.failed = False
        self._stop_asking: Disposer | None = None
        self._feed: Feed | None = None
        self._stop_following: Disposer | None = None
        self.root: Agent | None = None
        self.commands: SlashCommands | None = None

    async def attach(self, root: Agent) -> None:
        """Print ``root``'s text, tool calls and how its turns end; ask its tree's approval
        requests."""
        self.root = root
        root.on_stream(self.printer)
        root.on_turn_end(self._turn_ended)
        if self.show_tools and self._feed is None:
            self._feed = Feed(self.host)
            self._stop_following = await self._feed.follow(root.id, self._shown, after_seq=None)
        approvals = self.host.services.find("approvals")
        if approvals is not None and self._stop_asking is None:
            asker = TerminalAsker(
                self.lines, self.out, self.err, self.printer.end_line, PROMPT, self._look
            )
            self._stop_asking = listen(approvals, asker)

    async def _look(self, line: str) -> bool:
        """Run ``line`` when it is a command that only looks (``/show ID``) and ``commands``
        are set (``chat``): a request being asked is then asked again."""
        if self.commands is None or not is_read_only(line):
            return False
        print_reply(await self.commands.run(line.strip()), self.out, self.err)
        return True

    def _shown(self, event: ClientEvent) -> None:
        """The root's tool calls and results, one line each on stderr."""
        if isinstance(event, ItemCompleted):
            parts = tool_parts(event.item)
            if parts is not None:
                self.printer.end_line()
                print("".join(text for text, _ in parts), file=self.err, flush=True)

    def _turn_ended(self, outcome: TurnOutcome) -> None:
        self.printer.end_turn()
        if outcome.stop_reason != "completed":
            self.failed = True
            print(f"agent-host: {self._ending(outcome)}", file=self.err)

    def _ending(self, outcome: TurnOutcome) -> str:
        """How a turn that did not complete ended, in words."""
        if outcome.stop_reason == "max_tokens":
            limit = getattr(self.root.model if self.root else None, "max_tokens", None)
            return "answer cut at max_tokens" + (f" ({limit})" if isinstance(limit, int) else "")
        detail = f": {outcome.error}" if outcome.error else ""
        return f"turn ended ({outcome.stop_reason}){detail}"

    def close(self) -> None:
        """Stop asking approval requests and showing tool calls."""
        if self._stop_asking is not None:
            self._stop_asking()
            self._stop_asking = None
        if self._stop_following is not None:
            self._stop_following()
            self._stop_following = None
        if self._feed is not None:
            self._feed.close()
            self._feed = None


class Conversation:
    """A root agent, the model it talks to, and the ``front`` that shows it (``PlainFront``
    on ``out``/``err`` by default); ``lines`` (stdin by default) are the person's; ``profile``
    names the profile the root is started from."""

    def __init__(
        self,
        host: Host,
        out: TextIO = sys.stdout,
        err: TextIO = sys.stderr,
        *,
        script: ScriptFile | None = None,
        lines: Lines | None = None,
        front: Front | None = None,
        profile: str | None = None,
    ) -> None:
        self.host = host
        self.profile = profile
        self.out = out
        self.err = err
        self.script = script
        self.lines = lines if lines is not None else Lines(sys.stdin)
        self.front: Front = front or PlainFront(host, out, err, self.lines)
        self.root: Agent | None = None

    @property
    def failed(self) -> bool:
        """Whether a turn of the root failed (``run`` and plain ``chat`` then exit 1)."""
        return self.front.failed

    def choose_model(self) -> None:
        """``choose_model`` for this conversation's host, script and ``err``."""
        choose_model(self.host, self.script, self.err)

    async def open(self, resume: str | None = None, *, history: bool = True) -> Agent:
        """Choose the model, then create the root agent (from ``profile``, if any); or resume
        the stored root conversation ``resume`` ("": the one active last; one that cannot be is
        one line before anything else), then choose the model and print its ``history``
        (``host.cli.resume``)."""
        if resume is None:
            self.choose_model()
            return await self.attach(await Commands(self.host).start(profile=self.profile))
        from host.cli.resume import print_history, resume_root

        root = await resume_root(self.host, resume)
        self.choose_model()  # before the resumed agent's first step: it has not started
        if history:
            print_history(root, self.out)
        return await self.attach(root)

    async def attach(self, root: Agent) -> Agent:
        """Make ``root`` the agent talked to, shown by the front."""
        self.root = root
        await self.front.attach(root)
        return root

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
        self.leave()
        await self.host.aclose()
        return 1 if self.failed else 0

    def leave(self) -> None:
        """Stop showing and asking (before the host closes); say how many requests stay open
        (``still_open``)."""
        from host.cli.resume import still_open

        self.front.close()
        left = still_open(self.host)
        if left is not None:
            print(f"agent-host: {left}", file=self.err, flush=True)

    def _manager(self) -> Any:
        subagents = self.host.services.find("subagents")
        return subagents.manager() if subagents is not None else None


async def run_once(
    host: Host,
    prompt: str,
    script: ScriptFile | None = None,
    *,
    resume: str | None = None,
    profile: str | None = None,
) -> int:
    """``agent-host run``: one message (to a new root agent, from ``profile`` if given, or to
    the stored root conversation ``resume``; its history is not printed), every answer
    printed, each tool call and result a line on stderr; exit 1 if a turn failed."""
    lines = Lines(sys.stdin)
    front = PlainFront(host, sys.stdout, sys.stderr, lines, show_tools=True)
    conversation = Conversation(host, script=script, lines=lines, front=front, profile=profile)
    await conversation.open(resume, history=False)
    try:
        await conversation.say(prompt)
    finally:
        code = await conversation.close()
    return code


async def chat(
    host: Host,
    lines: TextIO = sys.stdin,
    script: ScriptFile | None = None,
    *,
    plain: bool = False,
    resume: str | None = None,
    profile: str | None = None,
) -> int:
    """``agent-host chat``: the terminal client when stdin and stdout are terminals (and not
    ``plain``), else one message per line until end of input or ``/exit``, exit 1 if a turn
    failed. Slash commands work in both. ``resume``: go on with that stored root conversation
    ("": the one active last) instead of a new one."""
    if not plain and lines is sys.stdin and is_terminal(sys.stdin, sys.stdout):
        from host.cli.terminal.front import TerminalFront

        front = TerminalFront(host)
        conversation = Conversation(host, script=script, front=front, profile=profile)
        with front.catching_ctrl_c():
            await conversation.open(resume)
            try:
                await front.run()
            finally:
                code = await conversation.close()
        return code
    conversation = Conversation(host, script=script, lines=Lines(lines), profile=profile)
    await conversation.open(resume)
    try:
        await plain_chat(conversation, SlashCommands(host, lambda: conversation.root))
    finally:
        code = await conversation.close()
    return code


class PlainPrompt:
    """Prints the prompt, and lines from elsewhere (``dev``'s reloads) without tangling them."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.prompting = False

    def prompt(self) -> None:
        """Show the input prompt."""
        print(PROMPT, end="", file=self.out, flush=True)
        self.prompting = True

    def line(self, text: str) -> None:
        """One line, on its own line even while the prompt waits (then shown again)."""
        lead = "\n" if self.prompting else ""
        print(f"{lead}{text}", file=self.out, flush=True)
        if self.prompting and not text.startswith("restarting:"):
            print(PROMPT, end="", file=self.out, flush=True)


async def plain_chat(
    conversation: Conversation, commands: SlashCommands, prompt: PlainPrompt | None = None
) -> None:
    """Prompt, read a line, act on it, until end of input or ``/exit``: a slash command
    answers on stdout (a mistake: one ``agent-host:`` line on stderr); a message waits
    until the root and its subagents are quiet. A line typed while an approval request is
    asked answers the request instead (``Lines``)."""
    prompt = prompt or PlainPrompt(conversation.out)
    if isinstance(conversation.front, PlainFront):  # also at an open request: /show and co.
        conversation.front.commands = commands
    while True:
        prompt.prompt()
        line = await conversation.lines.get()
        prompt.prompting = False
        text = line.strip()
        if not line:
            return
        if is_command(text):
            reply = await commands.run(text)
            print_reply(reply, conversation.out, conversation.err)
            if reply.exit:
                return
        elif text:
            await conversation.say(text)


def is_terminal(*streams: TextIO) -> bool:
    """Whether every stream is a terminal (the terminal client needs stdin and stdout)."""
    return all(stream.isatty() for stream in streams)
