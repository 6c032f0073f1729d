"""The terminal client: ``chat`` and ``dev`` when stdin and stdout are both terminals.

Input is never blocked: the prompt stays open while agents work, and a typed line goes to the
root at once (a followup when it is idle, a steer while it works), to an open approval
request, or to a slash command (``host.cli.slash``); while a request is open, the commands that
only look (``/show``, ``/agents``, ``/plugins``, ``/help``) still run and any other line is
the reply. Everything else is printed above the
prompt as it happens: the root's answer streamed (the line still arriving shows just above
the prompt), its tool calls and results, subagents' reports and settlement notices
(``host.cli.terminal.lines``), and the live transcript of a subagent opened with ``/show``.
The bottom line is the subagent tree's status (``Tree.status_line``), redrawn when a
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
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from prompt_toolkit import PromptSession
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.patch_stdout import patch_stdout
from rich.console import Console
from rich.text import Text

from host.agents.models import StreamEvent
from host.cli.slash import Reply, SlashCommands, is_command, is_read_only
from host.cli.style import Style
from host.cli.terminal.asker import PromptAsker
from host.cli.terminal.completion import SlashCompleter
from host.cli.terminal.lines import StreamLines, event_lines
from host.cli.transcript import render_message
from host.clients.tree import Tree, join_stored
from host.errors import HostError
from host.sessions.model import Event, MessageEvent, TurnEnd, TurnStart

if TYPE_CHECKING:
    from host.agents.agent import Agent
    from host.app import Host
    from host.disposal import Disposer
    from host.plugins.reload import ReloadOutcome
    from host.sessions.store import Session

PROMPT = "you> "
QUIT_WINDOW = 2.0
QUIT_HINT = "press Ctrl-C again to exit (or Ctrl-D)"
CLOSING = "closing: waiting for the agents to stop at a turn boundary"


class _Quit(Exception):
    """The person asked to end the conversation (a second Ctrl-C)."""


class TerminalFront:
    """Shows one conversation at a terminal and reads what the person types.

    ``attach(root)`` starts showing a root agent's tree; ``run()`` reads lines until the
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
        self._tree: Tree | None = None
        self._following: str | None = None
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

    def attach(self, root: Agent) -> None:
        """Show ``root``'s streamed answers, its tree's events and its approval requests."""
        self.root = root
        agents = self.host.services.agents

        def label_of(agent_id: str) -> str | None:
            agent = agents.get(agent_id)
            return agent.label if agent is not None else None

        self._tree = Tree(root.id, label_of, self._clock)
        self._stops.append(root.on_stream(self._streamed))
        self._stops.append(self.host.services.sessions.observe(self._appended))
        approvals = self.host.services.find("approvals")
        if approvals is not None:
            self._stops.append(approvals.on_request(self.asker))

    async def _add_stored_members(self) -> None:
        """Subagents the root had before this process (``dev`` resumed it after a restart)
        join the tree as settled, so the status line and completion know them."""
        service = self.host.services.find("subagents")
        if service is None or self.root is None or self._tree is None:
            return
        try:
            await join_stored(self._tree, service)
        except HostError as error:
            self.say(f"cannot list the subagents: {error.message}", "red")

    def say(self, line: Text | str, style: str | None = None) -> None:
        """Print one line above the prompt."""
        text = line if isinstance(line, Text) else Text(line, style=style or "")
        self._console.print(text, soft_wrap=True)

    def _streamed(self, event: StreamEvent) -> None:
        for line in self._stream.feed(event):
            self.say(line)
        self._redraw()

    def _appended(self, session: Session, events: Sequence[Event]) -> None:
        assert self.root is not None and self._tree is not None
        changed = bool(self._tree.observe(session.id, session.header.parent_session, events))
        if session.id == self.root.id:
            names = self._names()
            for event in events:
                changed = isinstance(event.body, (TurnStart, TurnEnd)) or changed
                if isinstance(event.body, TurnEnd):
                    for line in self._stream.flush():
                        self.say(line)
                for text in event_lines(event, names):
                    self.say(text)
        elif session.id == self._following:
            self._show_live(session.id, events)
        if changed:
            self._redraw()

    def _show_live(self, agent_id: str, events: Sequence[Event]) -> None:
        names = self._names()
        name = names.get(agent_id, agent_id)
        style = Style(self._colour)
        for event in events:
            if isinstance(event.body, MessageEvent):
                for line in render_message(event.body, style, names):
                    self.say(Text.assemble((f"│ {name} ", "dim"), Text.from_ansi(line)))
            elif isinstance(event.body, TurnEnd):
                self._following = None
                self.say(f"── end of the live view of {name} ({event.body.stop_reason}) ──", "dim")

    def _names(self) -> dict[str, str]:
        assert self._tree is not None and self.root is not None
        names = {member.id: member.name for member in self._tree.members()}
        names[self.root.id] = "you"
        return names

    def _status(self) -> FormattedText:
        width = self._session.app.output.get_size().columns
        root = self.root
        state = "working" if root is not None and root.status == "running" else "idle"
        tree = self._tree.status_line(max(0, width - 20)) if self._tree is not None else ""
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
            await self._add_stored_members()
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
            self._following = reply.follow
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
            members = self._tree.members() if self._tree is not None else []
            return [(member.id, member.label or member.status) for member in members]

        def plugins() -> list[tuple[str, str]]:
            return [(row["name"], row["state"]) for row in self.host.plugin_rows()]

        def models() -> list[tuple[str, str]]:
            return [(name, "model") for name in self.host.services.models.names()]

        return {"agent": agents, "plugin": plugins, "model": models}

    def close(self) -> None:
        """Stop showing the conversation (idempotent)."""
        stops, self._stops = self._stops, []
        for stop in reversed(stops):
            stop()

