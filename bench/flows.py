"""The three flows of docs/architecture.md, traced: the files and functions of the repo each visits.

Not a timing. Run from the project root with the project venv::

    .venv/bin/python bench/flows.py [--flow NAME ...] [--functions] [--json]

Each flow runs in-process on a real host (the built-in plugins, JSONL persistence in a
temporary directory, the scripted model) under ``sys.setprofile`` (and ``threading.setprofile``
in every thread started after it: the tool and persistence workers), once to warm up (lazy
imports, caches) and once traced:

* **tool-call**: a root agent's turn through its real ``Agent`` and driver; the trace runs from
  the scripted model handing out a call of a small ``echo`` tool (no approval needed) until the
  model is asked again with its result;
* **background-child**: a parent's turn calls the ``subagent`` tool (``agent_host_subagent``,
  background, the default); its child, built with the ``report`` tool
  (``tool_subagent_report``), reports once and answers; the trace runs from the model handing
  out the parent's ``subagent`` call until the parent's model is asked with the child's
  settlement notice in its log;
* **hot-reload**: a one-module plugin installed in a temporary site directory is edited (its
  tool answers another text) and ``ReloadLoop.step`` (``host/plugins/watch.py``) gets the
  changed path, as ``agent-host dev`` and tests/reload do; the trace is that step.

Counted (the code of the repo only: ``host/``, the first-party plugins and tool packages; not
``tests/``, ``bench/`` or the libraries): **files** and **functions** visited (a function is a
code object: a nested function or a lambda is one of its own), **calls** (fresh calls of those
functions; resuming a suspended coroutine or generator is not counted again) and **edges
between files** (distinct caller → callee function pairs whose files differ). A call counts
only when a function of the repo is entered, so a call into a library that calls back into the
repo shows the callback with the library as its caller (no edge). The
``background-child`` flow also prints its **subagent stack** (``host/subagents/``,
``host/builtins/subagents.py``, the delegation plugin and the report and control packages).
``--functions`` lists each file's functions; ``--json`` prints the figures as JSON.

The figures do not depend on the machine's load; they change only with the code (and the
Python version: 3.11's ``RESUME`` marks a fresh call).
"""

from __future__ import annotations

import argparse
import asyncio
import dis
import json
import os
import sys
import tempfile
import threading
import types
from collections import Counter
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# this checkout first (and its plugins), so that a copy of another revision measures itself
for where in ("plugins/subagent", "tool_subagent_control", "tool_subagent_report", ""):
    sys.path.insert(0, str(ROOT / where))
sys.dont_write_bytecode = True  # an edited plugin is always compiled from its new source

import attrs  # noqa: E402

from host import hookimpl  # noqa: E402
from host.agents import ModelRequest, ModelResponse, call, say  # noqa: E402
from host.agents.scripted import ScriptFn  # noqa: E402
from host.api import RegisterTool  # noqa: E402
from host.plugins.discovery import discover  # noqa: E402
from host.plugins.watch import ReloadLoop, WatchMap  # noqa: E402
from host.sessions import workers  # noqa: E402
from host.sessions.model import MessageEvent  # noqa: E402
from host.testing import HostHarness, call_tool  # noqa: E402
from host.tools import ToolExec, tool  # noqa: E402
from tests.distributions import write_distribution  # noqa: E402

PRODUCT = ("host/", "plugins/", "tool_subagent_control/", "tool_subagent_report/")
SUBAGENT_STACK = (
    "host/subagents/",
    "host/builtins/subagents.py",
    "plugins/subagent/",
    "tool_subagent_control/",
    "tool_subagent_report/",
)
MODEL = "host/agents/scripted.py"  # the model's side of the flow: a deployment has its own
COMPREHENSIONS = ("<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>")  # inlined in 3.12
RESUME = dis.opmap["RESUME"]
FRESH = 0  # RESUME's argument at a function's start (1-3: after a yield or an await)

Function = tuple[str, str, int]
"""A function of the repo: its file (relative to the root), qualified name and first line."""


class Trace:
    """What ``sys.setprofile`` saw of the repo's functions between ``start`` and ``stop``."""

    def __init__(self) -> None:
        self.calls: Counter[Function] = Counter()
        self.edges: Counter[tuple[Function, Function]] = Counter()
        self._paths: dict[str, str | None] = {}

    def _path(self, filename: str) -> str | None:
        """``filename`` relative to the root when it is product code, else None (cached)."""
        if filename not in self._paths:
            relative = os.path.relpath(os.path.realpath(filename), ROOT)
            product = (
                relative.startswith(PRODUCT) and "/tests/" not in relative and relative != MODEL
            )
            self._paths[filename] = relative if product else None
        return self._paths[filename]

    def _function(self, code: types.CodeType) -> Function | None:
        path = self._path(code.co_filename)
        if path is None or code.co_name in COMPREHENSIONS:
            return None
        return (path, code.co_qualname, code.co_firstlineno)

    def profile(self, frame: types.FrameType, event: str, arg: object) -> None:
        """Count a call of a function of the repo (and its caller's edge)."""
        if event != "call":
            return
        callee = self._function(frame.f_code)
        if callee is None:
            return
        code, lasti = frame.f_code.co_code, frame.f_lasti
        if lasti >= 0 and (code[lasti] != RESUME or code[lasti + 1] != FRESH):
            return  # a coroutine or generator resumed, not called
        self.calls[callee] += 1
        back = frame.f_back
        while back is not None and back.f_code.co_name in COMPREHENSIONS:
            back = back.f_back  # a comprehension calls on behalf of its function
        caller = None if back is None else self._function(back.f_code)
        if caller is not None:
            self.edges[(caller, callee)] += 1

    def start(self) -> None:
        """Count from now on, in every thread (``profile_every_thread``)."""
        ACTIVE[:] = [self]

    def stop(self) -> None:
        """Stop counting."""
        ACTIVE.clear()

    def figures(self, within: tuple[str, ...] = PRODUCT) -> dict[str, int]:
        """Files, functions, calls and edges between files, of the files under ``within``."""
        functions = [f for f in self.calls if f[0].startswith(within)]
        crossing = [(a, b) for a, b in self.edges if a[0] != b[0] and b[0].startswith(within)]
        return {
            "files": len({f[0] for f in functions}),
            "functions": len(functions),
            "calls": sum(self.calls[f] for f in functions),
            "edges between files": len(crossing),
        }

    def by_file(self) -> dict[str, list[str]]:
        """Each file visited and the functions visited in it, in source order."""
        files: dict[str, list[Function]] = {}
        for function in self.calls:
            files.setdefault(function[0], []).append(function)
        return {
            path: [f"{name}:{line}" for _, name, line in sorted(found, key=lambda f: f[2])]
            for path, found in sorted(files.items())
        }


class Window:
    """The traced window of one round: the scripted model opens and closes it."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.closed = asyncio.Event()

    def opening(self, reply: ModelResponse) -> ScriptFn:
        """A scripted entry that starts the trace, then answers ``reply``."""

        def entry(request: ModelRequest) -> ModelResponse:
            self.trace.start()
            return reply

        return entry

    def closing(self, reply: ModelResponse) -> ScriptFn:
        """A scripted entry that stops the trace, then answers ``reply``."""

        def entry(request: ModelRequest) -> ModelResponse:
            self.trace.stop()
            self.closed.set()
            return reply

        return entry


@attrs.frozen
class EchoArgs:
    """Arguments of ``echo``."""

    text: str = attrs.field(metadata={"description": "What to answer."})


@tool("echo", "Answer with the text given.", EchoArgs)
async def echo(args: EchoArgs, exec: ToolExec) -> str:
    """The tool of the tool-call flow."""
    return args.text


class EchoPlugin:
    """Registers ``echo``."""

    @hookimpl
    def register_tools(self, register: RegisterTool) -> None:
        """The flow's tool."""
        register(echo)


async def tool_call(temp: Path, traces: list[Trace]) -> None:
    """The tool-call flow (module docstring): one round per trace, on one host."""
    harness = HostHarness(("echo", EchoPlugin()), data_dir=temp / "data")
    try:
        root = await harness.root("caller")
        for trace in traces:
            window = Window(trace)
            harness.model.script(
                "caller",
                window.opening(call("echo", text="hello")),
                window.closing(say("done")),
            )
            root.followup("echo hello")
            await root.wait_idle()
            results = [
                e.body.content
                for e in root.session.events
                if isinstance(e.body, MessageEvent) and e.body.role == "tool"
            ]
            if results[-1:] != ["hello"]:
                raise SystemExit(f"flows.py: the tool call answered {results[-1:]}")
    finally:
        await harness.close()


async def background_child(temp: Path, traces: list[Trace]) -> None:
    """The background-child flow (module docstring): one round per trace, on one host."""
    wanted = {"subagent", "subagent_report"}
    harness = HostHarness(*[c for c in discover() if c.name in wanted], data_dir=temp / "data")
    try:
        for n, trace in enumerate(traces):
            window = Window(trace)
            label, task = f"parent {n}", f"scan the logs {n}"
            parent = await harness.root(label)
            harness.model.script(notified(label), window.closing(say("thanks")))
            harness.model.script(
                label,
                window.opening(call("subagent", description=task, prompt="Scan them.")),
                say("started"),
            )
            harness.model.script(task, call("report", output="nothing unusual"), say("done"))
            parent.followup("delegate the scan")
            await asyncio.wait_for(window.closed.wait(), 60)  # the notice reached the parent
            await parent.wait_idle()
            kinds = [
                (e.body.source or {}).get("kind")
                for e in parent.session.events
                if isinstance(e.body, MessageEvent)
            ]
            if kinds.count("subagent-report") != 1 or kinds.count("subagent-settled") != 1:
                raise SystemExit(f"flows.py: the parent's messages came from {kinds}")
    finally:
        await harness.close()


def notified(label: str) -> Callable[[ModelRequest], bool]:
    """Matches the model call of the agent ``label`` that carries a settlement notice."""

    def matches(request: ModelRequest) -> bool:
        return request.label == label and any(
            (m.source or {}).get("kind") == "subagent-settled" for m in request.messages
        )

    return matches


PLUGIN = "flows_reload"
PLUGIN_SOURCE = """
import attrs
from host import hookimpl
from host.tools import tool

@attrs.frozen
class Args:
    pass

@tool("edited", "Say which edit is loaded.", Args)
async def edited(args, exec):
    return "edit {n}"

@hookimpl
def register_tools(register):
    register(edited)
"""


async def hot_reload(temp: Path, traces: list[Trace]) -> None:
    """The hot-reload flow (module docstring): one edit per trace, on one host."""
    site = temp / "site"
    module = f"{PLUGIN}_module"
    write_distribution(
        site,
        "flows-reload-plugin",
        entry_points={PLUGIN: module},
        modules={module: PLUGIN_SOURCE.format(n=0)},
    )
    sys.path.insert(0, str(site))
    candidates = [c for c in discover() if c.name == PLUGIN]
    harness = HostHarness(*candidates, data_dir=temp / "data")
    try:
        lines: list[str] = []
        loop = ReloadLoop(WatchMap(harness.host.plugins), lines.append)
        for n, trace in enumerate(traces, start=1):
            path = site / f"{module}.py"
            path.write_text(PLUGIN_SOURCE.format(n=n), encoding="utf-8")
            trace.start()
            loop.step([path])
            trace.stop()
            result = await call_tool(harness.host, "edited", {}, agent=object())
            if result.text != f"edit {n}":
                raise SystemExit(f"flows.py: edit {n} not live: {lines[-1:]} {result.text!r}")
    finally:
        await harness.close()
        sys.path.remove(str(site))


FLOWS: dict[str, Callable[[Path, list[Trace]], Coroutine[Any, Any, None]]] = {
    "tool-call": tool_call,
    "background-child": background_child,
    "hot-reload": hot_reload,
}


ACTIVE: list[Trace] = []
"""The trace counting now, if any."""


def dispatch(frame: types.FrameType, event: str, arg: object) -> None:
    """The profile function of every thread: hands the event to the active trace."""
    if ACTIVE:
        ACTIVE[0].profile(frame, event, arg)


def warm_at_once(*prepare: Callable[[], object]) -> None:
    """``host.sessions.workers.warm`` for this script: a persistence's one-time set-ups (the
    codec's decoders) run when it is constructed, in the constructing thread, instead of on
    a worker thread that could still be busy with them while a flow is traced (under load
    they take long enough to overlap it). Start-up work is not part of any flow."""
    for task in prepare:
        task()


def profile_every_thread() -> None:
    """Profile this thread and every thread started from now on (the persistence's workers
    are started with the first host), before anything is traced."""
    threading.setprofile(dispatch)
    sys.setprofile(dispatch)


def measure(name: str) -> Trace:
    """Run flow ``name`` twice on one host (a warm-up, then traced); the second trace."""
    warm_up, measured = Trace(), Trace()
    with tempfile.TemporaryDirectory() as temp:
        asyncio.run(FLOWS[name](Path(temp), [warm_up, measured]))
    if not measured.calls:
        raise SystemExit(f"flows.py: the {name} flow traced nothing")
    return measured


def report(name: str, trace: Trace, functions: bool) -> dict[str, Any]:
    """Print one flow's figures (and, with ``functions``, what it visited); returns them."""
    figures: dict[str, Any] = {"whole": trace.figures()}
    if name == "background-child":
        figures["subagent stack"] = trace.figures(SUBAGENT_STACK)
    for part, counted in figures.items():
        text = ", ".join(f"{value} {key}" for key, value in counted.items())
        print(f"{name} ({part}): {text}")
    if functions:
        for path, names in trace.by_file().items():
            print(f"  {path} ({len(names)}): {' '.join(names)}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--flow", choices=list(FLOWS), action="append")
    parser.add_argument("--functions", action="store_true", help="list what each flow visits")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    options = parser.parse_args()
    results: dict[str, Any] = {}
    workers.warm = warm_at_once
    profile_every_thread()
    for name in options.flow or list(FLOWS):
        trace = measure(name)
        if options.json:
            results[name] = {"figures": trace.figures(), "files": trace.by_file()}
        else:
            results[name] = report(name, trace, options.functions)
    if options.json:
        print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
