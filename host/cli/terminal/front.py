"""The terminal client: ``chat`` and ``dev`` when stdin and stdout are both terminals.

Input is never blocked: the prompt stays open while agents work, and a typed line goes to the
root at once (a followup when it is idle, a steer while it works), to an open approval
request, or to a slash command (``host.cli.slash``); while a request is open, the commands that
only look (``/show``, ``/agents``, ``/plugins``, ``/help``) still run and any other line is
the reply. Everything else is printed above the prompt as it happens, from the events of the
client-facing feed (``host.clients.feed``, the same the app-server sends): the root's answer
streamed (the line still arriving shows just above the prompt), its tool calls and results,
subagents' reports and settlement notices (``host.cli.terminal.lines``), and the live
transcript of a subagent opened with ``/show`` (the feed of that subagent's session). The
bottom line is the subagent tree's status (the feed's ``Tree.status_line``), redrawn when a
lifecycle event changes it.

Ctrl-C interrupts the root's turn (not while a request is open); a second Ctrl-C within
``QUIT_WINDOW`` seconds (with no line entered between) ends the conversation, as do Ctrl-D
(at a request: its denial first) and ``/exit``; the same holds while
no prompt reads keys, and while the host closes Ctrl-C only says it is waiting
(``catching_ctrl_c``). prompt_toolkit reads the keys; rich styles the lines (no colour with
``NO_COLOR``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from prompt_toolkit import PromptSession
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.patch_stdout import patch_stdout
from rich.console import Console
from rich.text import Text

from host.cli.slash import Reply, SlashCommands, is_command, is_read_only
from host.cli.style import Style
from host.cli.terminal.asker import PromptAsker
from host.cli.terminal.completion import SlashCompleter
from host.cli.terminal.lines import StreamLines, event_lines
from host.cli.transcript import render_item
from host.clients.events import (
    AgentMessageDelta,
    ClientEvent,
    ItemCompleted,
    SubagentStarted,
    SubagentStatus,
    ToolCallProgress,
    TurnCompleted,
    TurnStarted,
)
from host.clients.feed import Feed
from host.clients.tree import Tree

if TYPE_CHECKING:
    from host.agents.agent import Agent
    from host.app import Host
    from host.disposal import Disposer
    from host.plugins.reload import ReloadOutcome

PROMPT = "you> "
QUIT_WINDOW = 2.0
QUIT_HINT = "press Ctrl-C again to exit (or Ctrl-D)"
CLOSING = "closing: waiting for the agents to stop at a turn boundary"
REDRAWING = (
    AgentMessageDelta, ToolCallProgress, TurnStarted, TurnCompleted, SubagentStarted,
    SubagentStatus,
)
"""The feed events that change the status line, the line arriving or a tool's progress."""


class _Quit(Exception):
    """The person asked to end the conversation (a second Ctrl-C)."""


class TerminalFront:
    """Shows one conversation at a terminal and reads what the person types.

    ``await attach(root)`` starts showing a root agent's tree; ``run()`` reads lines until the
    person ends the conversation; ``close()`` stops listening (the host is closed by the
    caller); ``catching_ctrl_c()`` spans all three and the host's closing. ``reload`` is
    ``dev``'s plugin reload, offered as ``/reload``.
    """

    def __init__(
        self,
        host: Host,
        *,
        reload: Callable[[str], ReloadOutcome] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.host = host
        self.failed = False
        self.root: Agent | None = None
        self._clock = clock
        self._colour = "NO_COLOR" not in os.environ
        self._console = Console(
            force_terminal=True, no_color=not self._colour, highlight=False, emoji=False
        )
        self._stream = StreamLines()
        self._feed = Feed(host)
        self._following: Disposer | None = None  # the live view of ``/show``
        self._last_interrupt = float("-inf")
        self._quitting = False  # a second Ctrl-C came while no prompt was reading keys
        self._closing = False
        self._stops: list[Disposer] = []
        self.commands = SlashCommands(
            host, lambda: self.root, reload=reload, style=Style(self._colour)
        )
        self.asker = PromptAsker(self.say, self._asking_changed)
        self._put_aside: Document | None = None
        self._session: PromptSession[str] = PromptSession(
            completer=SlashCompleter(self.commands, self._arguments()),
            complete_while_typing=False,
            key_bindings=self._keys(),
            bottom_toolbar=self._status,
            erase_when_done=False,
        )

    # -- showing ---------------------------------------------------------------------------

    async def attach(self, root: Agent) -> None:
        """Show ``root``'s streamed answers, its tree's events and its approval requests."""
        self.root = root
        self._stops.append(self._feed.close)
        self._stops.append(await self._feed.follow(root.id, self._shown, after_seq=None))
        approvals = self.host.services.find("approvals")
        if approvals is not None:
            self._stops.append(approvals.on_request(self.asker))

    @property
    def _tree(self) -> Tree | None:
        """The root's subagent tree, as the feed keeps it."""
        return self._feed.tree(self.root.id) if self.root is not None else None

    def say(self, line: Text | str, style: str | None = None) -> None:
        """Print one line above the prompt."""
        text = line if isinstance(line, Text) else Text(line, style=style or "")
        self._console.print(text, soft_wrap=True)

    def _shown(self, event: ClientEvent) -> None:
        """One event of the root's feed."""
        for line in self._stream.feed(event):
            self.say(line)
        names = self._names()
        for text in event_lines(event, names):
            self.say(text)
        if isinstance(event, REDRAWING):
            self._redraw()

    async def _follow(self, agent_id: str, after_seq: int) -> None:
        """``/show``'s live view: the subagent's feed, until its turn ends."""
        self._stop_following()
        name = self._names().get(agent_id, agent_id)
        style = Style(self._colour)

        def shown(event: ClientEvent) -> None:
            if isinstance(event, ItemCompleted):
                for line in render_item(event.item, style, self._names()):
                    self.say(Text.assemble((f"│ {name} ", "dim"), Text.from_ansi(line)))
            elif isinstance(event, TurnCompleted):
                self._stop_following()
                self.say(f"── end of the live view of {name} ({event.stop_reason}) ──", "dim")

        self._following = await self._feed.follow(agent_id, shown, after_seq=after_seq)

    def _stop_following(self) -> None:
        following, self._following = self._following, None
        if following is not None:
            following()

    def _names(self) -> dict[str, str]:
        tree, root = self._tree, self.root
        assert tree is not None and root is not None
        names = {member.id: member.name for member in tree.members()}
        names[root.id] = "you"
        return names

    def _status(self) -> FormattedText:
        width = self._session.app.output.get_size().columns
        root = self.root
        state = "working" if root is not None and root.status == "running" else "idle"
        shown = self._tree
        tree = shown.status_line(max(0, width - 20)) if shown is not None else ""
        line = f" agent {state}" + (f" · {tree}" if tree else "")
        return FormattedText([("", line[:width])])

    def _message(self) -> FormattedText:
        """The line still arriving (if any) above the prompt. Not in the prompt's last
        drawing, as Enter leaves it on the screen: that line is printed once it ends."""
        prompt = self.asker.prompt or PROMPT
        parts: list[tuple[str, str]] = []
        if self._stream.partial and not self._session.app.is_done:
            size = self._session.app.output.get_size()
            shown = self._stream.arriving(size.columns, max(1, size.rows // 2))
            parts.append(("", shown + "\n"))
        elif self._stream.progress and not self._session.app.is_done:
            width = self._session.app.output.get_size().columns
            parts.append(("italic", f"  ⋯ {self._stream.progress}"[:width] + "\n"))
        parts.append(("bold", prompt))
        return FormattedText(parts)

    def _asking_changed(self) -> None:
        """An approval request opened or closed: a line half typed for the conversation is
        put aside while one is open (so it is not taken as the answer), and given back once
        none is. Between prompts (from Enter on) the buffer holds the line just entered:
        nothing to keep."""
        buffer = self._session.default_buffer
        app = self._session.app
        if self.asker.prompt is not None:
            if self._put_aside is None and app.is_running and not app.is_done:
                self._put_aside = buffer.document
                buffer.reset()
        elif self._put_aside is not None:
            buffer.document, self._put_aside = self._put_aside, None
        self._redraw()

    def _redraw(self) -> None:
        app = self._session.app
        if app.is_running:
            app.invalidate()

    # -- reading ---------------------------------------------------------------------------

    async def run(self) -> None:
        """Read and act on lines until ``/exit``, Ctrl-D or a second Ctrl-C."""
        try:
            with patch_stdout(raw=True):
                while not self._quitting:
                    try:
                        line = await self._session.prompt_async(self._message)
                    except EOFError:  # Ctrl-D: at the question, also its answer
                        if self.asker.prompt is not None:
                            await self.asker.end_of_input()
                        break
                    except _Quit:
                        break
                    self._last_interrupt = float("-inf")  # a new line, a new quit window
                    if self.asker.prompt is not None and is_read_only(line):
                        await self.handle(line)  # a look at the tree before deciding
                        continue
                    if self.asker.take(line):
                        continue
                    if not await self.handle(line):
                        break
        finally:
            self.asker.stop()
            self._closing = True

    @contextlib.contextmanager
    def catching_ctrl_c(self) -> Iterator[None]:
        """For the block (the conversation from its start to the host closed): a Ctrl-C
        that comes while no prompt reads keys (a command running, the host closing) does
        what it does at the prompt, the second ending the conversation once the command is
        done, instead of stopping the program; once the conversation is closing it says
        that the agents are being waited for (``CLOSING``)."""
        loop = asyncio.get_running_loop()
        previous = signal.getsignal(signal.SIGINT)
        signal.signal(signal.SIGINT, lambda _n, _f: loop.call_soon_threadsafe(self._signalled))
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)

    def _signalled(self) -> None:
        if self._closing:
            self.say(CLOSING, "dim")
        elif self._ctrl_c():
            self._quitting = True

    async def handle(self, line: str) -> bool:
        """Act on one typed line; False when it ends the conversation."""
        text = line.strip()
        if not text:
            return True
        if is_command(text):
            reply = await self.commands.run(text)
            self._show_reply(reply)
            if reply.follow is not None:
                await self._follow(reply.follow, reply.shown_seq)
            return not reply.exit
        root = self.root
        assert root is not None
        if root.status == "running":
            root.steer(text)
        else:
            root.followup(text)
        self._redraw()
        return True

    def _show_reply(self, reply: Reply) -> None:
        for line in reply.lines:
            if reply.error:
                self.say(line, "red")
            else:
                self.say(Text.from_ansi(line))
        if reply.follow is not None:
            self.say("── following live; it ends with its turn ──", "dim")

    def _keys(self) -> KeyBindings:
        keys = KeyBindings()

        @keys.add("c-c")
        def interrupt(event: KeyPressEvent) -> None:
            if self._ctrl_c():
                event.app.exit(exception=_Quit())
            else:
                event.current_buffer.reset()

        return keys

    def _ctrl_c(self) -> bool:
        """Ctrl-C: True when it is the second within ``QUIT_WINDOW`` (the conversation ends),
        else the root's turn is interrupted (when it works, and no request is open: that one
        stays open, to be answered or asked again on resume) and the hint said."""
        now = self._clock()
        if now - self._last_interrupt < QUIT_WINDOW:
            return True
        self._last_interrupt = now
        root = self.root
        if root is not None and root.status == "running" and self.asker.prompt is None:
            root.interrupt()
            self.say(f"interrupting the agent's turn · {QUIT_HINT}", "yellow")
        else:
            self.say(QUIT_HINT, "dim")
        return False

    def _arguments(self) -> dict[str, Callable[[], list[tuple[str, str]]]]:
        def agents() -> list[tuple[str, str]]:
            tree = self._tree
            members = tree.members() if tree is not None else []
            return [(member.id, member.label or member.status) for member in members]

        def plugins() -> list[tuple[str, str]]:
            return [(row["name"], row["state"]) for row in self.host.plugin_rows()]

        def models() -> list[tuple[str, str]]:
            return [(name, "model") for name in self.host.services.models.names()]

        return {"agent": agents, "plugin": plugins, "model": models}

    def close(self) -> None:
        """Stop showing the conversation (idempotent)."""
        self._stop_following()
        stops, self._stops = self._stops, []
        for stop in reversed(stops):
            stop()

