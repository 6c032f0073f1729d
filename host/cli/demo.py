"""``agent-host demo``: the whole product in one keyless run.

A coordinator starts two background subagents and a foreground one; the children report
(one through a helper of its own); the coordinator lists them, sends a settled child more
work (a cold resume), interrupts a long-running child, and finally a new host over the same
data directory lists the children as ``[ready]`` and resumes one; last, a grandchild calls a
tool that needs approval, the request reaches the root's (scripted) user, who approves, and
the tool runs. The output is a transcript per phase, then the session tree. Everything is
deterministic except the random ids.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from host.agents.agent import Agent
from host.agents.scripted import ScriptedModel
from host.app import Host, open_host
from host.approvals.requests import Answer, ApprovalRequest
from host.cli import demo_script as script
from host.cli.chat import warn_unavailable_plugins
from host.cli.model_choice import SCRIPTED_DEFAULT
from host.cli.style import Style
from host.cli.transcript import render_events
from host.errors import HostError
from host.sessions.model import SessionHeader, new_id

Opener = Callable[[Path], Host]

NEEDED_PLUGINS = ("subagent", "subagent_control", "list_agents", "subagent_report", "approvals")
APPROVALS = {"approvals": {"mode": "ask", "allow": [], "deny": [], "ask": []}}
"""The demo's approval policy whatever the user's is: ask about tools that need approval."""
UNSYNCED = {"session_persistence": {"fsync": "never"}}
"""The demo's sessions are not synced to disk, so that its transcript is the same at every
run: with ``turn`` each sync lets the other agents run while it is in flight, and which child
reports first would follow the disk (docs/reliability.md, "Syncs off the event loop")."""


def check_plugins(host: Host) -> None:
    """Refuse to start, in one line, when a plugin the scenario uses is not active."""
    states = {row["name"]: row["state"] for row in host.plugin_rows()}
    missing = [
        f"{n} ({states.get(n, 'not installed')})"
        for n in NEEDED_PLUGINS
        if states.get(n) != "active"
    ]
    if missing:
        raise HostError(
            "DEMO_UNAVAILABLE",
            "the demo needs the first-party plugins active: "
            + ", ".join(missing)
            + " (pip install -r requirements-dev.txt)",
        )


class Demo:
    """Runs the phases against one host at a time and prints what each agent did."""

    def __init__(self, data_dir: Path, open_at: Opener, style: Style) -> None:
        self.data_dir = data_dir
        self.open_at = open_at
        self.style = style
        self.host = open_at(data_dir)
        warn_unavailable_plugins(self.host, sys.stderr)
        try:
            check_plugins(self.host)
        except HostError:
            self.host.close()
            raise
        self.long_task = script.LongTask()
        self.notes: list[str] = []
        self._install_demo_tool()
        self.printed: dict[str, int] = {}
        self.labels: dict[str, str] = {}
        self.root: Agent | None = None

    def _install_demo_tool(self) -> None:
        """The demo's tools, and its scripted user answering approval requests."""
        self.host.tools.register("long_task", self.long_task.tool, owner="demo")
        publish = script.publish_tool(self.notes.append)
        self.host.tools.register("publish_notes", publish, owner="demo")
        self.host.services.approvals.on_request(self.approve)

    async def approve(self, request: ApprovalRequest) -> Answer:
        """The scripted user: note who asked, and approve."""
        self.notes.append(f"approval requested by {request.who()}")
        self.notes.append(f"the user approved {request.tool}")
        return Answer.approve()

    @property
    def model(self) -> ScriptedModel:
        model = self.host.services.models.resolve("scripted")
        assert isinstance(model, ScriptedModel)
        return model

    # -- running ------------------------------------------------------------------------------

    async def say_to_root(self, title: str, text: str) -> None:
        """Send the user's message, wait until every agent is quiet, print the phase."""
        assert self.root is not None
        self.root.followup(text)
        await self.quiesce()
        await self.print_phase(title)

    async def quiesce(self) -> None:
        """Wait until the root is idle and no subagent is resident."""
        assert self.root is not None
        manager = self.host.services.subagents.manager()
        while True:
            await self.root.wait_idle()
            residents = manager.residents() if manager else []
            if not residents:
                if self.root.status == "idle":
                    return
                continue
            for activation in residents:
                await activation.wait_done()

    async def children(self) -> dict[str, str]:
        """label → id of every subagent below the root, from the service's catalog."""
        assert self.root is not None
        entries = await self.host.services.subagents.list_descendants(self.root.id)
        found = {e.label: e.id for e in entries if e.kind == "child" and e.label}
        self.labels.update({v: k for k, v in found.items()})
        return found

    # -- printing -----------------------------------------------------------------------------

    async def print_phase(self, title: str) -> None:
        """Every session's events since the last phase, in creation order (root first)."""
        await self.children()
        print(self.style(f"\n── {title} ──", "bold"))
        for note in self.notes:
            print(note)
        self.notes.clear()
        store = self.host.services.sessions
        persistence = self.host.services.session_persistence
        for header in sorted(await persistence.list(), key=SessionHeader.sort_key):
            live = store.get(header.id)
            events = live.events if live else (await persistence.inspect(header.id)).events
            self._print_session(header.id, events)

    def _print_session(self, session_id: str, events: Any) -> None:
        start = self.printed.get(session_id, 0)
        if len(events) <= start:
            return
        self.printed[session_id] = len(events)
        name = self.style(f"[{self.labels.get(session_id, session_id)}]", "magenta")
        for line in render_events(events[start:], self.style, self.labels):
            print(f"{name} {line}")


async def run_demo(data_dir: Path | None, open_at: Opener, style: Style | None = None) -> int:
    """Run the demo in ``data_dir`` (a temporary directory when None)."""
    style = style or Style.for_stream()
    if data_dir is None:
        with tempfile.TemporaryDirectory(prefix="agent-host-demo-") as temporary:
            return await _run(Path(temporary), open_at, style)
    return await _run(data_dir, open_at, style)


async def _run(data_dir: Path, open_at: Opener, style: Style) -> int:
    demo = Demo(data_dir, open_at, style)
    print(f"agent-host demo — sessions in {data_dir}")
    try:
        await _first_host(demo)
    finally:
        await _close(demo.host)
    await _second_host(demo)
    return 0


async def _first_host(demo: Demo) -> None:
    root_id = new_id("coordinator-")[:24]
    script.script_first_phase(demo.model)
    demo.root = await demo.host.services.agents.create(SessionHeader(id=root_id), label=script.ROOT)
    demo.labels[root_id] = script.ROOT
    await demo.say_to_root("1. delegate", "Prepare the release notes for version 1.4.")
    children = await demo.children()
    script.script_listing(demo.model)
    await demo.say_to_root("2. list", "Which subagents did you start?")
    script.script_follow_up(demo.model, children[script.DRAFT])
    await demo.say_to_root("3. send more work to a settled child", "Add a security section.")
    script.script_benchmark(demo.model)
    demo.root.followup("Start the long benchmark.")
    await demo.long_task.started.wait()
    await demo.root.wait_idle()
    await demo.print_phase("4. a long-running child")
    children = await demo.children()
    script.script_interrupt(demo.model, children[script.BENCHMARK])
    await demo.say_to_root("5. interrupt it", "Stop the benchmark, it takes too long.")


async def _second_host(demo: Demo) -> None:
    assert demo.root is not None
    root_id = demo.root.id
    demo.host = demo.open_at(demo.data_dir)
    demo._install_demo_tool()
    try:
        demo.root = await demo.host.services.agents.resume(root_id, label=script.ROOT)
        children = await demo.children()
        script.script_after_restart(demo.model, children[script.RESEARCH])
        await demo.say_to_root("6. a new host over the same data", "Where were we?")
        script.script_approval(demo.model)
        await demo.say_to_root("7. a grandchild asks the user", "Release 1.4.")
        await _print_tree(demo)
    finally:
        await _close(demo.host)


async def _print_tree(demo: Demo) -> None:
    assert demo.root is not None
    print(demo.style("\n── the tree ──", "bold"))
    print(f"{script.ROOT} ({demo.root.id})")
    entries = await demo.host.services.subagents.list_descendants(demo.root.id)
    for entry in entries:
        indent = "  " * (entry.depth or 1)
        if entry.kind == "child":
            print(f"{indent}{entry.label} [{entry.mode}, {entry.activity}] ({entry.id})")
        else:
            print(f"{indent}[diagnostic: {entry.reason}] ({entry.id})")


async def _close(host: Host) -> None:
    """Shut ``host`` down; a plugin whose disposal failed is one line on stderr."""
    for failure in await host.aclose():
        print(failure.line(), file=sys.stderr)


def default_opener(no_plugin: tuple[str, ...] = ()) -> Opener:
    """Open real hosts the way the CLI does (built-ins plus installed plugins), with the
    scripted model as the default whatever is configured: every agent of the demo, children
    included, answers from its script; nothing synced to disk (``UNSYNCED``)."""
    overrides: dict[str, Mapping[str, Any]] = {**SCRIPTED_DEFAULT, **APPROVALS, **UNSYNCED}
    return lambda data_dir: open_host(data_dir=data_dir, no_plugin=no_plugin, overrides=overrides)
