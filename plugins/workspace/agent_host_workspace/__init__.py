"""The workspace plugin (``workspace``): tools over the files of one root directory.

``read_file``, ``list_files`` and ``grep`` only read; ``write_file``, ``edit_file`` and
``run_command`` change things and so ask the root's user first (``needs_approval``, through
the approvals route: a child's call is asked of the user of its root session). Every path is
resolved inside the root (``agent_host_workspace.paths``); a refusal, like any other failure,
is one error line for the model and changes nothing. The root is ``[plugins.workspace] root``
(relative to the project directory), by default the project directory itself. docs/workspace.md
lists the tools, their limits and their texts.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from agent_host_workspace.base import DEFAULT_LINES, DEFAULT_TIMEOUT, Refused
from host import hookimpl
from host.tools import Tool, ToolResult, tool

if TYPE_CHECKING:
    from agent_host_workspace.paths import Root
    from host.api import RegisterTool, ServiceContext

@attrs.frozen
class Config:
    """``[plugins.workspace]``: the root (None: the project directory; a relative path is
    taken from it) and whether ``grep`` uses ``rg`` when it is installed."""

    root: str | None = None
    ripgrep: bool = True


def root_directory(config: Config, ctx: ServiceContext) -> Path:
    """The directory the tools work under, as configured."""
    project = ctx.settings.project_dir or Path.cwd()
    return project / config.root if config.root is not None else project


def _root(directory: Path) -> Root:
    """The root over ``directory``; ``Refused`` when it is missing or not a directory (at
    every call: it may be made, or removed, while the host runs)."""
    root = _made_root(directory)
    root.check()
    return root


@functools.cache
def _made_root(directory: Path) -> Root:
    """The root over ``directory``, made at the first call that finds it (with the modules
    doing the work: listing plugins at start-up loads none of them)."""
    from agent_host_workspace.paths import Root

    return Root(directory)


async def _answer(work: Callable[[], Awaitable[str]]) -> ToolResult:
    """The tool result of ``work``: its text, or its refusal as one error line."""
    try:
        return ToolResult(await work())
    except Refused as refused:
        return ToolResult.error(str(refused))


def read_tools(directory: Path, config: Config) -> list[Tool]:
    """``read_file``, ``list_files`` and ``grep`` over ``directory``."""

    @tool(concurrency_safe=True)
    async def read_file(path: str, offset: int = 1, limit: int = DEFAULT_LINES) -> ToolResult:
        """Read a text file of the workspace, its lines numbered (as cat -n numbers them). At
        most 2000 lines and 256 KiB at a time; read on with offset. Binary files are refused.

        Args:
            path: The file, relative to the workspace root.
            offset: The first line to read (1 = the first line of the file).
            limit: How many lines to read.
        """
        from agent_host_workspace.reading import read_lines

        return await _answer(lambda: _thread(read_lines, _root(directory), path, offset, limit))

    @tool(concurrency_safe=True)
    async def list_files(glob: str, path: str | None = None) -> ToolResult:
        """List the workspace files matching a glob, newest first (at most 100 shown).
        Files .gitignore excludes are left out. The glob is .gitignore-style: "*.py" matches
        at any depth, "src/**/*.py" under src.

        Args:
            glob: The pattern the file paths (relative to the root) must match.
            path: The directory to list under (default: the workspace root).
        """
        from agent_host_workspace.reading import list_matching

        return await _answer(lambda: _stoppable(list_matching, _root(directory), glob, path))

    @tool(concurrency_safe=True)
    async def grep(
        pattern: str, path: str | None = None, glob: str | None = None, context: int = 0
    ) -> ToolResult:
        """Search the workspace files for a regular expression; prints path:line:text for
        each matching line (at most 250 lines). Files .gitignore excludes, binary files and
        files over 20 MiB are skipped.

        Args:
            pattern: The regular expression to search for.
            path: A file or directory to search (default: the workspace root).
            glob: Only files whose path matches this .gitignore-style glob (e.g. "*.py").
            context: Lines of context to show around each match (0 to 10).
        """
        import shutil

        from agent_host_workspace import search

        rg = shutil.which("rg") if config.ripgrep else None
        return await _answer(
            lambda: search.grep(_root(directory), rg, pattern, path, glob, context)
        )

    return [read_file, list_files, grep]


def change_tools(directory: Path) -> list[Tool]:
    """``write_file``, ``edit_file`` and ``run_command`` over ``directory``: each asks
    first."""

    @tool(needs_approval=True)
    async def write_file(path: str, content: str) -> ToolResult:
        """Write a whole file of the workspace (created, or replaced atomically); its missing
        folders are created. Asks the user first.

        Args:
            path: The file, relative to the workspace root.
            content: The complete new content.
        """
        from agent_host_workspace.writing import write_text

        return await _answer(lambda: _thread(write_text, _root(directory), path, content))

    @tool(needs_approval=True)
    async def edit_file(path: str, old: str, new: str, replace_all: bool = False) -> ToolResult:
        """Replace an exact piece of text in a workspace file (atomically). old must occur
        exactly once unless replace_all is true. Asks the user first.

        Args:
            path: The file, relative to the workspace root.
            old: The exact text to replace.
            new: The text to put in its place.
            replace_all: Replace every occurrence of old.
        """
        from agent_host_workspace.writing import edit_text

        return await _answer(
            lambda: _thread(edit_text, _root(directory), path, old, new, replace_all)
        )

    @tool(needs_approval=True)
    async def run_command(
        command: str, timeout: int = DEFAULT_TIMEOUT, shell: bool = False
    ) -> ToolResult:
        """Run a command in the workspace root and return its output (standard output and
        error, at most 30000 bytes shown) and exit status. It runs without a shell unless
        shell is true; it is stopped after timeout seconds. Asks the user first.

        Args:
            command: The command line (words split as a shell splits them).
            timeout: Seconds before it is stopped (1 to 600).
            shell: Run it with /bin/sh -c (pipes, redirections, variables).
        """
        return await _run(directory, command, timeout, shell)

    return [write_file, edit_file, run_command]


async def _run(directory: Path, line: str, timeout: int, shell: bool) -> ToolResult:
    from agent_host_workspace import command as commands

    try:
        outcome = await commands.run(_root(directory), line, timeout, shell)
    except Refused as refused:
        return ToolResult.error(str(refused))
    failed = outcome.stopped is not None or outcome.status != 0
    return ToolResult(outcome.text(line), is_error=failed)


async def _thread(function: Callable[..., str], *args: Any) -> str:
    return await asyncio.to_thread(function, *args)


async def _stoppable(function: Callable[..., str], *args: Any) -> str:
    """``function(*args, stop)`` on a worker thread; ``stop()`` turns true once the call is
    interrupted, so the thread does not go on walking for nothing."""
    stop = threading.Event()
    try:
        return await asyncio.to_thread(function, *args, stop.is_set)
    finally:
        stop.set()


@hookimpl
def register_tools(register: RegisterTool, ctx: ServiceContext, config: Config) -> None:
    """Offer the six workspace tools to every agent (the root is resolved at the first
    call)."""
    directory = root_directory(config, ctx)
    for made in (*read_tools(directory, config), *change_tools(directory)):
        register(made)
