"""Small helpers shared by the suites, the plugins' included (no tests here).

* ``Gate``: holds a model call or a tool in flight until the test opens it;
* ``forged``: an impostor ``Agent`` object with a real agent's id and session;
* ``bodies`` / ``accepted``: event bodies of one type, from an agent or from events;
* ``message`` / ``user``: a numbered user-message event, a user message; ``contents``: the
  messages' contents in a session;
* ``stop_reasons`` / ``turn_count`` / ``user_texts``: an agent's or a log's turn ends, its
  turn count, the user messages a model request carried;
* ``tool_messages`` / ``tool_results``: the tool messages among events, or their
  ``(content, is_error)``;
* ``NoArgs``: the arguments of a tool that takes none; ``named_tool``: a tool answering its name;
* ``wait_until`` / ``soon``: poll a check until it holds, from a plain or an async test
  (a process or server seen from outside; ``tests.lines.wait_for`` waits for a line);
* ``plugin_row`` / ``plugin_rows``: a plugin's row of ``Host.plugin_rows()``, or every row
  by plugin name;
* ``scripted``: a host's scripted model;
* ``run_and_kill``: run a script and SIGKILL it at a planned moment (the crash trials);
* ``free_port``: a loopback TCP port nothing listens on;
* ``in_checkout``: marks a test that writes into the checkout (run one at a time).
"""

from __future__ import annotations

import asyncio
import re
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any

import attrs
import pytest

from host.agents import Agent, ModelRequest, ModelResponse, ScriptedModel
from host.app import Host
from host.cancel import CancelSignal
from host.sessions.model import Event, InboxAccepted, MessageEvent, TurnEnd, TurnStart
from host.sessions.store import Session
from host.tools import Tool, ToolExec, tool

in_checkout = pytest.mark.xdist_group("checkout")
"""Marks a test that writes into the checkout itself: a build of it (``build/``, the
``*.egg-info`` of ``pip wheel`` or ``pip install -e``) or mypy's cache (``.mypy_cache``, run in
process from the root). The suite runs on several pytest-xdist workers (``--dist loadgroup``,
pyproject.toml): the tests so marked all run on one of them, one after another, never two at
once."""


class Gate:
    """Holds a coroutine until ``open()``; records that it was entered and whether cancelled."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self._open = asyncio.Event()
        self.cancelled = False
        self.signal: CancelSignal | None = None

    def open(self) -> None:
        """Let the held coroutine continue."""
        self._open.set()

    async def hold(self, signal: CancelSignal | None = None) -> None:
        """Enter, then wait for ``open()``; a cancellation is recorded and re-raised."""
        self.signal = signal
        self.entered.set()
        try:
            await self._open.wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise

    def reply(self, response: ModelResponse) -> Any:
        """A scripted-model entry that holds the model call, then answers ``response``."""

        async def held(request: ModelRequest) -> ModelResponse:
            await self.hold()
            return response

        return held


def forged(real: Agent) -> Agent:
    """Another ``Agent`` object carrying ``real``'s id and session (never registered)."""
    return Agent(real.session, real.model, real.tools, real.sections, label=real.label)


def bodies(source: Agent | Iterable[Event], kind: type) -> list[Any]:
    """The bodies of one type among ``source``'s events (an agent's session, or events)."""
    events = source.session.events if isinstance(source, Agent) else source
    return [e.body for e in events if isinstance(e.body, kind)]


def accepted(source: Agent | Iterable[Event]) -> list[InboxAccepted]:
    """The inbox acceptances among ``source``'s events, in order."""
    return bodies(source, InboxAccepted)


def stop_reasons(source: Agent | Iterable[Event]) -> list[str]:
    """The stop reasons of the turns among ``source``'s events, in order."""
    return [end.stop_reason for end in bodies(source, TurnEnd)]


def turn_count(source: Agent | Iterable[Event]) -> int:
    """How many turns started among ``source``'s events."""
    return len(bodies(source, TurnStart))


def user_texts(request: ModelRequest) -> list[str]:
    """The user messages a model request carried."""
    return [m.content for m in request.messages if m.role == "user"]


def user(text: str) -> MessageEvent:
    """A user message saying ``text``."""
    return MessageEvent(role="user", content=text)


def message(seq: int, text: str) -> Event:
    """Event ``seq``: a user message saying ``text``."""
    return Event(seq, user(text))


def contents(session: Session) -> list[str]:
    """The contents of the messages among ``session``'s events, in order."""
    return [e.body.content for e in session.events if isinstance(e.body, MessageEvent)]


def tool_messages(source: Agent | Iterable[Event] | Iterable[MessageEvent]) -> list[MessageEvent]:
    """The tool messages among ``source``'s events (an agent's session, events, or messages)."""
    events = source.session.events if isinstance(source, Agent) else source
    found = (e.body if isinstance(e, Event) else e for e in events)
    return [m for m in found if isinstance(m, MessageEvent) and m.role == "tool"]


def tool_results(
    source: Agent | Iterable[Event] | Iterable[MessageEvent],
) -> list[tuple[str, bool]]:
    """``(content, is_error)`` of each tool message among ``source``'s events, in order."""
    return [(m.content, m.is_error) for m in tool_messages(source)]


@attrs.frozen
class NoArgs:
    """The arguments of a tool that takes none."""


def named_tool(name: str, answer: str | None = None, params: type = NoArgs) -> Tool:
    """A tool ``name`` (described "The <name> tool.") that answers ``answer``, else its own
    name; ``params`` are its arguments (none by default)."""

    @tool(name, f"The {name} tool.", params)
    async def run(args: Any, exec: ToolExec) -> str:
        return answer if answer is not None else name

    return run


def plugin_row(host: Host, name: str) -> dict[str, Any]:
    """The row of plugin ``name`` in ``host.plugin_rows()``."""
    return next(r for r in host.plugin_rows() if r["name"] == name)


def plugin_rows(host: Host) -> dict[str, dict[str, Any]]:
    """Every row of ``host.plugin_rows()``, by plugin name."""
    return {row["name"]: row for row in host.plugin_rows()}


def without_origin(line: str) -> str:
    """A plugin failure's line without the `` (FILE:LINE in FUNCTION)`` that ends it, when
    it names where in the plugin's code the error came from (``host.plugins.origin``)."""
    return re.sub(r" \([\w./-]+\.py:\d+ in [\w<>]+\)$", "", line)


def scripted(host: Host) -> ScriptedModel:
    """The host's scripted model (the ``scripted`` entry of its model registry)."""
    model = host.services.models.resolve("scripted")
    assert isinstance(model, ScriptedModel)
    return model


def run_and_kill(
    argv: list[str], how: tuple[str, float], *, stderr: int | IO[Any] | None = None
) -> list[str]:
    """Run ``argv`` (a script that prints a line per acknowledged step), SIGKILL it as planned
    and return every non-empty line it printed, stripped.

    ``("sleep", s)``: ``s`` seconds after the start, wherever it is; ``("read", n)``: once it
    printed its first line and ``n`` more (the script goes on meanwhile); ``("pause", _)``: once
    it printed ``paused`` (its stdin is then a pipe it blocks on). Reading fails the test if
    the script ends first.
    """
    step, amount = how
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE if step == "pause" else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=stderr,
    )
    assert proc.stdout is not None
    lines: list[str] = []

    def read_line() -> str:
        assert proc.stdout is not None
        lines.append(proc.stdout.readline().decode())
        assert lines[-1], f"the script ended after {len(lines) - 1} lines"
        return lines[-1]

    try:
        if step == "sleep":
            time.sleep(amount)
        elif step == "read":
            for _ in range(1 + int(amount)):
                read_line()
        else:
            while read_line() != "paused\n":
                pass
    finally:
        proc.send_signal(signal.SIGKILL)
        lines += proc.stdout.read().decode().splitlines()
        proc.stdout.close()
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait()
    return [line.strip() for line in lines if line.strip()]


def wait_until(check: Callable[[], Any], what: str, timeout: float = 10.0) -> Any:
    """Poll ``check`` until it returns something truthy, and return that; fail after
    ``timeout`` seconds, naming ``what`` was awaited."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.02)


async def soon(condition: Callable[[], object], timeout: float = 5.0) -> bool:
    """Whether ``condition()`` holds within ``timeout`` seconds, polled between loop turns."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def free_port() -> int:
    """A TCP port on loopback that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
