"""``agent-host dev``: the chat loop, with edited plugins reloaded in process as you save.

The host watches the code of every plugin in development (editable installs and checkouts on
``PYTHONPATH``; see ``host.plugins.watch``) plus any ``--watch`` path. A change to a tool or
setup-contribution plugin reloads just that plugin (``host.plugins.reload``) and prints one line per
plugin: ``reloaded X in N ms`` or ``reload of X failed, previous version kept: <error>``.
A change to a plugin that provides services (or any change, with ``--restart``) prints
``restarting: <reason>`` and re-executes the same command line: sessions are on disk, the
conversation's root agent is resumed from its session, and continuable children cold-resume
when next addressed.

Watcher settings: ``watchfiles`` yields a batch once no new event arrived for ``step``
milliseconds, but never later than ``debounce`` milliseconds after the first one. Its default
``step`` of 50 ms costs about 75 ms per edit before anything happens. An editor's save is a
burst of events well under a millisecond apart (truncate and write, or write a temporary file
and rename it), so ``STEP_MS = 5`` still sees a save as one batch and cuts the watcher's share
of edit-to-callable to a few milliseconds. ``DEBOUNCE_MS = 300`` bounds the wait during long
bursts (a ``git checkout``, a formatter over the tree): the plugins reload then, and the rest
of the burst coalesces into the next round. A half-written file that slips through anyway is
harmless: the reload fails, the previous version keeps running, and the next batch fixes it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from host.agents.agent import Agent
from host.app import Host
from host.cli import termination
from host.cli.approve import Lines
from host.cli.chat import Conversation, PlainPrompt, is_terminal, plain_chat
from host.cli.slash import SlashCommands
from host.clients.commands import Commands
from host.errors import HostError
from host.plugins.config import CONFIG_FILE
from host.plugins.watch import ReloadLoop, WatchMap, cancel_task

if TYPE_CHECKING:
    from host.cli.script_file import ScriptFile
    from host.cli.terminal.front import TerminalFront

STEP_MS = 5
DEBOUNCE_MS = 300
RESUME_ENV = "AGENT_HOST_DEV_ROOT"


class ArmedEvent(asyncio.Event):
    """The stop event of one ``watchfiles.awatch``, which also tells when that one watches.

    ``awatch`` sets its watcher up lazily, inside the generator, then waits for changes in a
    worker thread, where ``RustNotify.watch`` checks the stop event on every step (``is_set``).
    The watches are in place before that wait starts, so the first check sets ``armed``.
    """

    def __init__(self) -> None:
        super().__init__()
        self.armed = asyncio.Event()
        self._owner = asyncio.get_running_loop()
        self._told = False

    def is_set(self) -> bool:
        """Whether to stop; the first call (from the watching thread) reports ``armed``."""
        if not self._told:
            self._told = True
            self._owner.call_soon_threadsafe(self.armed.set)
        return super().is_set()


class Watcher:
    """Batches of changed paths from ``watchfiles`` (imported here: only ``dev`` needs it):
    everything below ``paths``, and the single ``files`` (watched through their directories,
    not recursively, since editors save by replacing a file).

    ``start`` returns once every watch is in place, so a save made after it is never missed;
    a path that cannot be watched raises there. Iterating yields batches; ``aclose`` stops.
    """

    def __init__(
        self,
        paths: Sequence[Path],
        *,
        files: Sequence[Path] = (),
        step: int = STEP_MS,
        debounce: int = DEBOUNCE_MS,
    ) -> None:
        self.paths, self.files, self.step, self.debounce = paths, files, step, debounce
        self._queue: asyncio.Queue[set[str]] = asyncio.Queue()
        self._pumps: list[asyncio.Future[None]] = []
        self._stops: list[ArmedEvent] = []

    async def start(self) -> None:
        """Start one ``awatch`` per kind of watch and wait until each one watches."""
        from watchfiles import awatch

        wanted = {str(Path(os.path.abspath(f))) for f in self.files}
        sources: list[tuple[list[str], dict[str, Any]]] = []
        if self.paths:
            sources.append(([str(p) for p in self.paths], {}))
        if wanted:
            folders = sorted({os.path.dirname(f) for f in wanted})
            only = {"recursive": False, "watch_filter": lambda _change, path: path in wanted}
            sources.append((folders, only))
        for paths, options in sources:
            missing = [path for path in paths if not os.path.exists(path)]
            if missing:  # watchfiles would only say "No path was found."
                raise FileNotFoundError(f"cannot watch {missing[0]}: no such file or directory")
            stop = ArmedEvent()
            changes = awatch(
                *paths, step=self.step, debounce=self.debounce, stop_event=stop, **options
            )
            self._stops.append(stop)
            self._pumps.append(asyncio.ensure_future(self._pump(changes)))
        for stop, pump in zip(self._stops, self._pumps, strict=True):
            armed = asyncio.ensure_future(stop.armed.wait())
            either: set[asyncio.Future[Any]] = {armed, pump}
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
            if not armed.done():
                await cancel_task(armed)
                pump.result()  # why it could not watch

    async def _pump(self, source: AsyncIterator[set[tuple[Any, str]]]) -> None:
        async for changes in source:
            await self._queue.put({path for _change, path in changes})

    def __aiter__(self) -> Watcher:
        return self

    async def __anext__(self) -> set[str]:
        """The next batch; a watcher that broke raises its error, one that stopped ends."""
        getter = asyncio.ensure_future(self._queue.get())
        pending: set[asyncio.Future[Any]] = {getter, *self._pumps}
        await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        if getter.done():
            return getter.result()
        await cancel_task(getter)
        for pump in self._pumps:
            if pump.done():
                pump.result()
        raise StopAsyncIteration

    async def aclose(self) -> None:
        """Stop every watch (its thread returns within a step) and wait for the pumps."""
        for stop in self._stops:
            stop.set()
        for pump in self._pumps:
            pump.cancel()
        await asyncio.gather(*self._pumps, return_exceptions=True)


@contextlib.asynccontextmanager
async def watch_changes(
    paths: Sequence[Path],
    *,
    step: int = STEP_MS,
    debounce: int = DEBOUNCE_MS,
    files: Sequence[Path] = (),
) -> AsyncIterator[Watcher]:
    """A started ``Watcher`` (every watch in place) for the block; stopped after it."""
    watcher = Watcher(paths, files=files, step=step, debounce=debounce)
    try:
        await watcher.start()
        yield watcher
    finally:
        await watcher.aclose()


def config_files(host: Host) -> list[Path]:
    """The files plugins read their configuration from: the config file (or the project's
    ``agent-host.toml`` it would be) and the project's ``.mcp.json``."""
    project = host.settings.project_dir or Path.cwd()
    return [host.settings.config_path or project / CONFIG_FILE, project / ".mcp.json"]


class DevConversation(Conversation):
    """The chat conversation, resuming the root agent of the process it restarted from."""

    async def resume_or_create(self, root_id: str | None) -> Agent:
        """Resume ``root_id`` when given (and resumable) as ``chat --resume`` does (its stored
        subagents waiting on the user ask again), else create a new root agent (the model
        was chosen before: ``choose_model``)."""
        commands = Commands(self.host)
        if root_id:
            try:
                return await self.attach(await commands.resume(root_id))
            except (HostError, OSError) as error:
                message = getattr(error, "message", error)
                print(f"agent-host: notice: starting a new conversation ({message})", file=self.err)
        return await self.attach(await commands.start())


async def run_dev(
    host: Host,
    *,
    watch: Iterable[Path] = (),
    restart_always: bool = False,
    lines: TextIO = sys.stdin,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
    root_id: str | None = None,
    script: ScriptFile | None = None,
    terminal: bool = True,
) -> tuple[str | None, str | None]:
    """Chat while watching; returns (restart reason or None, the root agent's id).

    The host is shut down (``aclose``) before this returns, in both cases. A failed plugin
    that registers models is refused (``ConfigError``) before anything starts. Every watch
    is in place before the prompt shows, so no save made from then on is missed. ``script``
    (``--script``) makes the scripted model answer from a file, from its start again after a
    restart. On a terminal (stdin and stdout, unless not ``terminal``) the terminal client
    shows the conversation, with ``/reload``; otherwise plain lines.
    """
    front = _terminal_front(host) if terminal and lines is sys.stdin else None
    conversation = DevConversation(
        host, out, err, script=script, lines=Lines(lines), front=front
    )
    conversation.choose_model()
    watch_map = WatchMap(
        host.plugins,
        extra=list(watch),
        ignore=[host.settings.data_dir],
        restart_always=restart_always,
        config_files=config_files(host),
    )
    paths = watch_map.paths()
    names = ", ".join(watch_map.roots) or "no plugin in development"
    ctrl_c = front.catching_ctrl_c() if front is not None else contextlib.nullcontext()
    with ctrl_c:
        async with watch_changes(paths, files=watch_map.config_files) as changes:
            print(f"agent-host: watching {len(paths)} path(s) for {names}", file=err, flush=True)
            root = await conversation.resume_or_create(root_id)
            chat, say = _chat(conversation, front)
            reloads = ReloadLoop(watch_map, say).run(changes)
            try:
                reason = await _until_one_ends(chat, reloads)
            finally:
                conversation.leave()
                await host.aclose()
    return reason, root.id


def _terminal_front(host: Host) -> TerminalFront | None:
    """The terminal client, with ``/reload``, when stdin and stdout are terminals."""
    if not is_terminal(sys.stdin, sys.stdout):
        return None
    from host.cli.terminal.front import TerminalFront

    return TerminalFront(host, reload=host.reload)


def _chat(
    conversation: Conversation, front: TerminalFront | None
) -> tuple[Awaitable[None], Callable[[str], None]]:
    """The conversation to run beside the reload loop, and where the loop's lines go."""
    if front is not None:
        return front.run(), front.say
    host = conversation.host
    prompt = PlainPrompt(conversation.out)
    commands = SlashCommands(host, lambda: conversation.root, reload=host.reload)
    return plain_chat(conversation, commands, prompt), prompt.line


async def _until_one_ends(chat: Awaitable[None], reloads: Awaitable[str | None]) -> str | None:
    """Run the chat and the reload loop until either ends (the other is cancelled); the
    restart reason when the reload loop decided one."""
    chatting, reloading = asyncio.ensure_future(chat), asyncio.ensure_future(reloads)
    try:
        done, _ = await asyncio.wait({chatting, reloading}, return_when=asyncio.FIRST_COMPLETED)
        return reloading.result() if reloading in done else None
    finally:
        for task in (chatting, reloading):
            task.cancel()
        await asyncio.gather(chatting, reloading, return_exceptions=True)


def restart_process(root_id: str | None) -> None:
    """Re-execute the same command line (same pid, same stdin), resuming ``root_id``."""
    if root_id:
        os.environ[RESUME_ENV] = root_id
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, sys.orig_argv)


def command(host: Host, args: argparse.Namespace) -> int:
    """The ``dev`` sub-command (``host.cli.main`` calls it with the opened host)."""
    reason, root_id = termination.run(
        run_dev(
            host,
            watch=args.watch,
            restart_always=args.restart,
            root_id=os.environ.pop(RESUME_ENV, None),
            script=args.script,
            terminal=not args.plain,
        )
    )
    if reason is not None:
        restart_process(root_id)
    return 0
