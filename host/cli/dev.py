"""``agent-host dev``: the chat loop, with edited plugins reloaded in process as you save.

The host watches the code of every plugin in development (editable installs and checkouts on
``PYTHONPATH``; see ``host.plugins.watch``) plus any ``--watch`` path. A change to a tool or
setup-contribution plugin reloads just that plugin (``Host.reload``) and prints one line per
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
import os
import sys
import threading
from collections.abc import AsyncIterator, Iterable, Sequence
from pathlib import Path
from typing import Any, TextIO

from host.agents.agent import Agent
from host.app import Host
from host.cli.chat import ROOT_LABEL, Conversation
from host.errors import HostError
from host.plugins.config import CONFIG_FILE
from host.plugins.watch import ReloadLoop, WatchMap

STEP_MS = 5
DEBOUNCE_MS = 300
RESUME_ENV = "AGENT_HOST_DEV_ROOT"
PROMPT = "you> "


async def watch_changes(
    paths: Sequence[Path],
    *,
    step: int = STEP_MS,
    debounce: int = DEBOUNCE_MS,
    files: Sequence[Path] = (),
) -> AsyncIterator[set[str]]:
    """Batches of changed paths from ``watchfiles`` (imported here: only ``dev`` needs it):
    everything below ``paths``, and the single ``files`` (watched through their directories,
    not recursively, since editors save by replacing a file)."""
    from watchfiles import awatch

    wanted = {str(Path(os.path.abspath(f))) for f in files}
    watchers = [awatch(*paths, step=step, debounce=debounce)] if paths else []
    if files:
        folders = sorted({os.path.dirname(f) for f in wanted})
        watchers.append(
            awatch(
                *folders,
                step=step,
                debounce=debounce,
                recursive=False,
                watch_filter=lambda _change, path: path in wanted,
            )
        )
    queue: asyncio.Queue[set[str]] = asyncio.Queue()

    async def pump(source: AsyncIterator[set[tuple[Any, str]]]) -> None:
        async for changes in source:
            await queue.put({path for _change, path in changes})

    pumps = [asyncio.ensure_future(pump(source)) for source in watchers]
    try:
        while True:
            yield await queue.get()
    finally:
        for task in pumps:
            task.cancel()
        await asyncio.gather(*pumps, return_exceptions=True)


def config_files(host: Host) -> list[Path]:
    """The files plugins read their configuration from: the config file (or the project's
    ``agent-host.toml`` it would be) and the project's ``.mcp.json``."""
    project = host.settings.project_dir or Path.cwd()
    return [host.settings.config_path or project / CONFIG_FILE, project / ".mcp.json"]


class DevConversation(Conversation):
    """The chat conversation, resuming the root agent of the process it restarted from."""

    async def resume_or_create(self, root_id: str | None) -> Agent:
        """Resume ``root_id`` when given (and resumable), else create a new root agent (the
        model was chosen before: ``choose_model``)."""
        agents = self.host.services.agents
        if root_id:
            try:
                return self.attach(await agents.resume(root_id, label=ROOT_LABEL))
            except (HostError, OSError) as error:
                message = getattr(error, "message", error)
                print(f"agent-host: notice: starting a new conversation ({message})", file=self.err)
        return self.attach(await agents.create(label=ROOT_LABEL))


class Console:
    """Prints the prompt and the watcher's lines without tangling them."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.prompting = False

    def prompt(self) -> None:
        """Show the input prompt."""
        print(PROMPT, end="", file=self.out, flush=True)
        self.prompting = True

    def line(self, text: str) -> None:
        """One line of the watcher, on its own line even while the prompt waits."""
        lead = "\n" if self.prompting else ""
        print(f"{lead}{text}", file=self.out, flush=True)
        if self.prompting and not text.startswith("restarting:"):
            print(PROMPT, end="", file=self.out, flush=True)


def _read_lines(stream: TextIO) -> asyncio.Queue[str]:
    """Lines of ``stream`` ("" at the end), read by a daemon thread so exit never waits on it."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str] = asyncio.Queue()

    def read() -> None:
        while True:
            line = stream.readline()
            loop.call_soon_threadsafe(queue.put_nowait, line)
            if not line:
                return

    threading.Thread(target=read, name="agent-host-dev-stdin", daemon=True).start()
    return queue


async def _chat(conversation: Conversation, console: Console, lines: asyncio.Queue[str]) -> None:
    while True:
        console.prompt()
        line = await lines.get()
        console.prompting = False
        if not line or line.strip() == "/exit":
            return
        if line.strip():
            await conversation.say(line.strip())


async def run_dev(
    host: Host,
    *,
    watch: Iterable[Path] = (),
    restart_always: bool = False,
    lines: TextIO = sys.stdin,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
    root_id: str | None = None,
) -> tuple[str | None, str | None]:
    """Chat while watching; returns (restart reason or None, the root agent's id).

    The host is shut down (``aclose``) before this returns, in both cases. A failed plugin
    that registers models is refused (``ConfigError``) before anything starts.
    """
    conversation = DevConversation(host, out, err)
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
    print(f"agent-host: watching {len(paths)} path(s) for {names}", file=err, flush=True)
    console = Console(out)
    root = await conversation.resume_or_create(root_id)
    loop = ReloadLoop(watch_map, host.reload, console.line)
    tasks: set[asyncio.Future[Any]] = {
        asyncio.ensure_future(_chat(conversation, console, _read_lines(lines)))
    }
    changes = watch_changes(paths, files=watch_map.config_files)
    watcher = asyncio.ensure_future(loop.run(changes))
    tasks.add(watcher)
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        reason = watcher.result() if watcher in done else None
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await host.aclose()
    return reason, root.id


def restart_process(root_id: str | None) -> None:
    """Re-execute the same command line (same pid, same stdin), resuming ``root_id``."""
    if root_id:
        os.environ[RESUME_ENV] = root_id
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, sys.orig_argv)


def command(host: Host, args: argparse.Namespace) -> int:
    """The ``dev`` sub-command (``host.cli.main`` calls it with the opened host)."""
    reason, root_id = asyncio.run(
        run_dev(
            host,
            watch=args.watch,
            restart_always=args.restart,
            root_id=os.environ.pop(RESUME_ENV, None),
        )
    )
    if reason is not None:
        restart_process(root_id)
    return 0
