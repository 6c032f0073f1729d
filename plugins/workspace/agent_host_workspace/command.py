"""``run_command``: one command in the root, its output captured, nothing left running.

The command line is split as a POSIX shell would split words (``shlex``) and run without a
shell; ``shell=true`` runs it with ``/bin/sh -c``. It runs in its own process group, with no
input, standard output and error merged. When it exits, times out, prints more than
``MAX_OUTPUT_BYTES`` or its call is interrupted, the whole group is killed (what it started
in the background included), so no process outlives the call.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal

from agent_host_workspace.base import Refused
from agent_host_workspace.paths import Root

MAX_TIMEOUT = 600
SHOWN_BYTES = 30_000
MAX_OUTPUT_BYTES = 1024 * 1024
_CHUNK = 1 << 16
_POLL_SECONDS = 0.02
_CLOSE_SECONDS = 5


class Outcome:
    """What a command did: its output (the first ``SHOWN_BYTES``), exit status, why it was
    stopped (None: it exited)."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.total = 0
        self.status: int | None = None
        self.stopped: str | None = None

    def text(self, command: str) -> str:
        """The result text: the output, then how the command ended."""
        output = self.head.decode("utf-8", "replace").rstrip()
        if self.total > len(self.head):
            output += f"\n… (output cut: {self.total} bytes, the first {SHOWN_BYTES} shown)"
        ending = self.stopped or f"exit status {self.status}"
        return f"{output}\n({ending})" if output else f"({ending})"


def argv(command: str, shell: bool) -> list[str]:
    """The program and its arguments; ``Refused`` for an empty or badly quoted command."""
    if "\x00" in command:
        raise Refused("command contains a NUL character")
    if shell:
        return ["/bin/sh", "-c", command]
    try:
        words = shlex.split(command)
    except ValueError as error:
        raise Refused(f"command cannot be split into words: {error}") from None
    if not words:
        raise Refused("command is empty")
    return words


async def run(root: Root, command: str, timeout: int, shell: bool) -> Outcome:
    """Run ``command`` in the root (module docstring)."""
    if not 1 <= timeout <= MAX_TIMEOUT:
        raise Refused(f"timeout must be between 1 and {MAX_TIMEOUT} seconds")
    words = argv(command, shell)
    spawning = asyncio.ensure_future(_spawn(root, words))
    try:
        process = await asyncio.shield(spawning)
    except asyncio.CancelledError:  # the command may be running already: stop its group too
        spawning.add_done_callback(_kill_spawned)
        raise
    outcome = Outcome()
    try:
        await asyncio.wait_for(_collect(process, outcome), timeout)
    except TimeoutError:
        outcome.stopped = f"timed out after {timeout} s; stopped"
    finally:
        _kill_group(process.pid)
        outcome.status = await _exit_status(process)
        await _close(process)
    return outcome


async def _spawn(root: Root, words: list[str]) -> asyncio.subprocess.Process:
    """Start the command in its own process group. Shielded from the call's cancellation:
    cancelled half-way, asyncio would kill the started process alone, not its group."""
    try:
        return await asyncio.create_subprocess_exec(
            *words, cwd=root.path, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    except OSError as error:
        raise Refused(f"cannot run {words[0]!r}: {error.strerror or error}") from None


def _kill_spawned(spawning: asyncio.Future[asyncio.subprocess.Process]) -> None:
    """Stop the command a cancelled call started (its pipe and exit are left to asyncio)."""
    if not spawning.cancelled() and spawning.exception() is None:
        _kill_group(spawning.result().pid)


async def _close(process: asyncio.subprocess.Process) -> None:
    """Read what is left of the output (its writers are dead), so that the pipe closes and
    the process is reaped before the call returns."""
    assert process.stdout is not None
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(_CLOSE_SECONDS):
            while await process.stdout.read(_CHUNK):
                pass
            await process.wait()


async def _collect(process: asyncio.subprocess.Process, outcome: Outcome) -> None:
    """Read the output until the command exits (what it left running is killed then, which
    closes the output) or passes ``MAX_OUTPUT_BYTES``."""
    assert process.stdout is not None
    reader = asyncio.ensure_future(_read(process.stdout, outcome))
    exited = asyncio.ensure_future(_exit_status(process))
    try:
        await asyncio.wait([reader, exited], return_when=asyncio.FIRST_COMPLETED)
        if exited.done():
            _kill_group(process.pid)
        elif outcome.stopped is None:  # the output closed: the command is about to exit
            await exited
        await reader
    finally:
        for task in (reader, exited):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def _exit_status(process: asyncio.subprocess.Process) -> int:
    """The exit status once the process has exited, whoever still holds its output open
    (``Process.wait`` waits for the output to close too, before Python 3.12)."""
    while process.returncode is None:
        await asyncio.sleep(_POLL_SECONDS)
    return process.returncode


async def _read(stream: asyncio.StreamReader, outcome: Outcome) -> None:
    while chunk := await stream.read(_CHUNK):
        room = SHOWN_BYTES - len(outcome.head)
        if room > 0:
            outcome.head += chunk[:room]
        outcome.total += len(chunk)
        if outcome.total > MAX_OUTPUT_BYTES:
            outcome.stopped = f"output passed {MAX_OUTPUT_BYTES} bytes; stopped"
            return


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
