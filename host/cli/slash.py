"""Slash commands of ``chat`` and ``dev``: act on the conversation's tree instead of talking.

A line that starts with ``/`` is a command (``/help`` lists them); anything else is a message
for the root agent. Each command answers with lines of plain text; a mistake (an unknown
command or id, a missing argument) is one line saying so, and changes nothing. The same
commands work on a terminal and over pipes.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TextIO

import attrs

from host.cli import render
from host.cli.transcript import render_events
from host.clients.commands import Commands
from host.errors import HostError
from host.sessions.model import SubagentDescriptorEvent
from host.subagents.rows import entries_of, status_of

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from host.agents.agent import Agent
    from host.app import Host
    from host.cli.style import Style
    from host.plugins.reload import ReloadOutcome


@attrs.frozen
class Reply:
    """What a command printed, whether it was a mistake, and whether the chat should end.
    ``follow`` names a running agent whose events the front end shows live from now on,
    after ``shown_seq`` (the last of its log the lines show)."""

    lines: tuple[str, ...] = ()
    error: bool = False
    exit: bool = False
    follow: str | None = None
    shown_seq: int = -1


def mistake(text: str) -> Reply:
    """A one-line error reply."""
    return Reply((text,), error=True)


Handler = Callable[["SlashCommands", str], Awaitable[Reply]]


@attrs.frozen
class Command:
    """One command: its name, usage, one-line summary, what its argument names (for
    completion: ``agent``, ``plugin``, ``model`` or None) and whether only ``dev`` has it."""

    name: str
    usage: str
    summary: str
    handler: Handler
    completes: str | None = None
    dev_only: bool = False


class SlashCommands:
    """The commands of one conversation: ``host`` and the root agent they act for.

    ``reload`` is ``dev``'s reload (None elsewhere: ``/reload`` is then unknown);
    ``style`` colours ``/show`` transcripts.
    """

    def __init__(
        self,
        host: Host,
        root: Callable[[], Agent | None],
        *,
        reload: Callable[[str], ReloadOutcome] | None = None,
        style: Style | None = None,
    ) -> None:
        self.host = host
        self.actions = Commands(host)
        self._root = root
        self.reload = reload
        self.style = style
        self.model_name = host.services.models.default_name

    @property
    def commands(self) -> list[Command]:
        """The commands available here, in ``/help`` order."""
        return [c for c in COMMANDS if self.reload is not None or not c.dev_only]

    def find(self, name: str) -> Command | None:
        """The command called ``name`` (without its slash), or None."""
        return next((c for c in self.commands if c.name == name), None)

    async def run(self, line: str) -> Reply:
        """Run one ``/command args`` line. A command that fails is one line (a bug in it
        too; ``--debug`` shows its traceback): the conversation goes on."""
        name, _, rest = line.strip()[1:].partition(" ")
        command = self.find(name)
        if command is None:
            return mistake(f"unknown command /{name} (/help lists the commands)")
        try:
            return await command.handler(self, rest.strip())
        except HostError as error:
            return mistake(f"/{name}: {error.message}")
        except Exception as error:
            if log.isEnabledFor(logging.DEBUG):  # --debug, which adds no handler of its own
                log.error("/%s failed", name, exc_info=True)
            return mistake(f"/{name} failed: {type(error).__name__}: {error}")

    @property
    def root(self) -> Agent:
        """The root agent (the commands run only once it exists)."""
        root = self._root()
        if root is None:
            raise HostError("NO_ROOT", "the conversation has not started")
        return root

    def subagents(self) -> Any:
        """The subagent service, or None when it is not active."""
        return self.host.services.find("subagents")

    async def resolve(self, text: str) -> str | Reply:
        """The id of the descendant ``text`` names (an id, an id prefix or a label), or the
        mistake saying why there is none (always one without the subagent service)."""
        return pick(text, await self.tree_rows() if text else [])

    async def tree_rows(self) -> list[dict[str, Any]]:
        """The root's descendants, one row each: id, label, parent, depth, status (or the
        diagnostic of one that cannot be read)."""
        service = self.subagents()
        if service is None:
            return []
        entries = await entries_of(service, self.root.id, "descendants")
        agents = self.host.services.agents
        rows = []
        for entry in entries:
            row: dict[str, Any] = {"id": entry.id, "depth": entry.depth}
            if entry.kind == "child":
                row["label"] = entry.label
                status = status_of(agents, entry)  # ready: only storage holds it
                one_shot_ended = entry.mode != "continuable" and status == "ready"
                row["status"] = "ended" if one_shot_ended else status
            else:
                row["diagnostic"] = entry.reason
            rows.append(row)
        return rows


def pick(text: str, rows: Sequence[dict[str, Any]]) -> str | Reply:
    """The id among ``rows`` (``SlashCommands.tree_rows``) that ``text`` names: an id, a
    unique id prefix or a label; else the mistake saying why there is none."""
    if not text:
        return mistake("name an agent: an id or a label (/agents lists them)")
    if any(row["id"] == text for row in rows):
        return text
    matches = [row for row in rows if row.get("label") == text or row["id"].startswith(text)]
    ids: list[str] = sorted({row["id"] for row in matches})
    if len(ids) == 1:
        return ids[0]
    if ids:
        return mistake(f"{text!r} names {len(ids)} agents: {', '.join(ids)}")
    return mistake(f"no agent {text!r} in this conversation (/agents lists them)")


async def _help(commands: SlashCommands, _arg: str) -> Reply:
    width = max(len(c.usage) for c in commands.commands)
    lines = [f"{c.usage.ljust(width)}  {c.summary}" for c in commands.commands]
    lines.append("Anything else is a message for the agent (a steer while it is working).")
    return Reply(tuple(lines))


async def _agents(commands: SlashCommands, _arg: str) -> Reply:
    rows = await commands.tree_rows()
    if not rows:
        return Reply(("(no subagents)",))
    lines = []
    for row in rows:
        indent = "  " * (row["depth"] - 1)
        if "diagnostic" in row:
            lines.append(f"{indent}{row['id']}  [unavailable: {row['diagnostic']}]")
        else:
            lines.append(f"{indent}{row['label'] or '-'}  {row['id']}  [{row['status']}]")
    return Reply(tuple(lines))


async def _show(commands: SlashCommands, arg: str) -> Reply:
    listed = await commands.tree_rows()
    found = pick(arg, listed)
    if isinstance(found, Reply):
        return found
    rows = {row["id"]: row for row in listed}
    if "diagnostic" in rows[found]:
        return mistake(f"cannot show {found}: {rows[found]['diagnostic']}")
    live = commands.host.services.sessions.get(found)
    if live is not None:
        events: Sequence[Any] = live.events
    else:
        persistence = commands.host.services.find("session_persistence")
        if persistence is None:
            return mistake(f"cannot show {found}: it is not live and nothing is stored")
        try:
            stored = await persistence.inspect(found)
        except HostError as error:
            return mistake(f"cannot show {found}: {error.message}")
        if stored.damage is not None:  # events past it would be missing without a word
            return mistake(f"cannot show {found}: corrupt ({stored.damage})")
        events = stored.events
    names = {row["id"]: row.get("label") or row["id"] for row in rows.values()}
    names[commands.root.id] = "you"
    conversation = [e for e in events if not isinstance(e.body, SubagentDescriptorEvent)]
    lines = render_events(conversation, commands.style, names)
    status = commands.host.services.agents.status(found)
    head = f"── {names.get(found, found)} ({found}) · {status or rows[found]['status']} ──"
    follow = found if status == "running" else None
    return Reply((head, *lines), follow=follow, shown_seq=events[-1].seq if events else -1)


async def _send(commands: SlashCommands, arg: str) -> Reply:
    target, _, text = arg.partition(" ")
    if not text.strip():
        return mistake("usage: /send ID text")
    found = await commands.resolve(target)
    if isinstance(found, Reply):
        return found
    try:  # as send_message would (the clients layer's command)
        await commands.actions.send(commands.root.id, found, text.strip())
    except HostError as error:
        return mistake(error.message)
    return Reply((f"message queued for {found}",))


async def _interrupt(commands: SlashCommands, arg: str) -> Reply:
    root = commands.root
    if not arg:
        if root.status != "running":
            return Reply(("nothing to interrupt: the agent is idle",))
        root.interrupt()
        return Reply(("interrupting the current turn",))
    found = await commands.resolve(arg)
    if isinstance(found, Reply):
        return found
    await commands.actions.interrupt_subagent(root.id, found)  # resolve found it: it exists
    return Reply((f"interrupt requested for {found}",))


async def _plugins(commands: SlashCommands, _arg: str) -> Reply:
    return Reply(tuple(render.plugin_table(commands.host.plugin_rows()).splitlines()))


async def _reload(commands: SlashCommands, arg: str) -> Reply:
    if not arg:
        return mistake("usage: /reload NAME")
    assert commands.reload is not None  # dev_only: listed only with a reload
    names = {row["name"] for row in commands.host.plugin_rows()}
    if arg not in names:
        return mistake(f"no plugin {arg!r} (/plugins lists them)")
    outcome = commands.reload(arg)
    return Reply((outcome.line(),), error=not outcome.ok)


async def _model(commands: SlashCommands, arg: str) -> Reply:
    models = commands.host.services.models
    root = commands.root
    available = ", ".join(models.names())
    if not arg:
        return Reply((f"model: {commands.model_name} (available: {available})",))
    if arg not in models.names():
        return mistake(f"no model {arg!r} (available: {available})")
    root.model = models.resolve(arg)
    commands.model_name = arg
    return Reply((f"the agent's next model call uses {arg}",))


async def _exit(_commands: SlashCommands, _arg: str) -> Reply:
    return Reply(exit=True)


COMMANDS: tuple[Command, ...] = (
    Command("agents", "/agents", "the subagent tree with each one's status", _agents),
    Command("show", "/show ID", "a subagent's transcript (followed live while it runs)", _show,
            completes="agent"),
    Command("send", "/send ID TEXT", "queue TEXT as the subagent's next turn", _send,
            completes="agent"),
    Command("interrupt", "/interrupt [ID]", "stop the agent's (or a subagent's) current turn",
            _interrupt, completes="agent"),
    Command("plugins", "/plugins", "the plugins and their state", _plugins),
    Command("reload", "/reload NAME", "reload a plugin now", _reload, completes="plugin",
            dev_only=True),
    Command("model", "/model [NAME]", "show or switch the agent's model", _model,
            completes="model"),
    Command("help", "/help", "this list", _help),
    Command("exit", "/exit", "end the conversation (also Ctrl-D)", _exit),
)


READ_ONLY = frozenset({"show", "agents", "plugins", "help"})
"""The commands that only look: they still run while an approval request is open (any other
line is then the reply)."""


def is_read_only(line: str) -> bool:
    """Whether a typed line is one of the ``READ_ONLY`` commands."""
    return _named(line) in READ_ONLY


def names_a_command(line: str) -> bool:
    """Whether a typed line is one of the ``COMMANDS`` (``/usr/local`` is not): at a question
    it is not taken as the answer (``host.cli.approve.interpret``)."""
    return _named(line) in {command.name for command in COMMANDS}


def _named(line: str) -> str | None:
    """The command a typed line names (``/send ID TEXT`` → ``send``), None for a message."""
    return line.strip()[1:].split(maxsplit=1)[0] if is_command(line) else None


def is_command(line: str) -> bool:
    """Whether a typed line is a slash command (``/`` then a letter), not a message."""
    text = line.strip()
    return len(text) > 1 and text[0] == "/" and text[1].isalpha()


def print_reply(reply: Reply, out: TextIO, err: TextIO) -> None:
    """A slash command's lines on ``out``; a mistake as ``agent-host:`` lines on ``err``."""
    for answer in reply.lines:
        if reply.error:
            print(f"agent-host: {answer}", file=err, flush=True)
        else:
            print(answer, file=out, flush=True)
