"""Background children end to end through one host, against LangGraph's ``Send`` fan-out.

Run from the project root with the project venv and the benchmark's own requirements
(``.venv/bin/pip install -r bench/requirements.txt``; LangGraph is not a dependency of the
host)::

    .venv/bin/python bench/subagents.py [--children 1000 5000] [--fsync turn never]
        [--turn] [--rounds R] [--profile N]

**Host**: a real host (the built-in plugins and the ``subagent`` delegation plugin; JSONL
persistence in a temporary directory with each fsync policy given: by default ``turn``, the
deployment default, then ``never``, the cost without the disk; the scripted model). One root
parent calls the ``subagent`` tool ``N`` times (background, the default), exactly as a turn
would, while it is in a turn (its first model call waits for the delegations); each call
publishes a child with its own durable session,
which answers once, settles and notifies the parent (a settlement notice durably accepted in
the parent's inbox; the parent's model answers the notices after that first call). The clock
runs from the parent's turn until every notice is in the parent's log (counted as they land, by
an observer of the session store) and the parent is idle.
Checked: N children, N notices, each naming its child once. ``--turn`` makes the delegations
a real turn's instead: the parent's scripted model answers its first call with one response
asking for the N ``subagent`` calls, which the agent's driver runs as its tool batch (the
same children, notices and checks; the clock from the parent's turn as above).

**Baseline, measured in the same run**: the same fan-out through LangGraph's ``Send`` API —
one graph whose entry edge sends ``N`` tasks to a ``child`` node that answers once, the
answers gathered into the parent's state by a reducer — compiled with the SQLite checkpointer
(``SqliteSaver`` over a file in a temporary directory, one thread), invoked once. LangGraph's
children are function calls whose writes land in the one checkpoint database, not sessions
of their own; SQLite syncs its write-ahead log about once per child (``strace -c`` counts
1,020 ``fdatasync`` for 1,000 children; they happen in C, so this script cannot count them).

Prints ms per child for each, wall clock and CPU time (of the whole process, every thread:
steadier than the wall clock on a shared machine), the ratios host ÷ LangGraph (target <= 1
at 5,000), the ``fsync``/``fdatasync`` calls the host made per child and the time spent in
them (counted and timed by wrapping ``os.fsync`` and ``os.fdatasync`` in this process; the
host runs them on its sync thread, beside the event loop), and the files it created and the
time spent creating them (``os.open`` with ``O_CREAT | O_EXCL``): the two floors under a
durable session of its own per child, which vary with the file system far more than the
host's own work. Each side starts from a collected heap (``gc.collect()`` before it), so
neither pays for collecting the other's garbage. Each round writes in a directory of its
own, and every round's files are removed only when the run ends: on an ext4 without a journal
the kernel does not hand out an inode freed within the last minute (up to six while its inode
table block is not yet written back), and every file created skips past each such inode of
its group, so a round that followed the deletion of its predecessor's 5,000 logs paid about
0.5 ms per child for that cleanup, not for its own work (``docs/benchmarks.md``).
``--rounds R`` measures each row R times and prints the median ratio: on a shared machine
either side's figure swings by half from one round to the next. ``--profile N`` runs the
host side under cProfile and prints its N most expensive functions (cumulative, then own
time) after the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import itertools
import operator
import os
import pstats
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypedDict

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SYNCS: Counter[str] = Counter()
"""The ``fsync``/``fdatasync`` calls of the process, by name."""
FILE_WORK: defaultdict[str, float] = defaultdict(float)
"""Seconds in those calls (``syncing``, on any thread), the files created (``created``: opened
with ``O_CREAT | O_EXCL``) and seconds in those opens (``creating``)."""
_COUNT = threading.Lock()


def _counted(name: str) -> None:
    """Wrap ``os.<name>`` to count its calls in ``SYNCS`` and time them in ``FILE_WORK`` —
    before the host is imported, so that a module binding it at import
    (``sync_fd = os.fdatasync``) binds the counter."""
    real: Callable[[int], None] = getattr(os, name)

    def counted(fd: int) -> None:
        started = time.perf_counter()
        try:
            real(fd)
        finally:
            with _COUNT:
                SYNCS[name] += 1
                FILE_WORK["syncing"] += time.perf_counter() - started

    setattr(os, name, counted)


def _timed_creation() -> None:
    """Wrap ``os.open`` to time the calls that create a file (``O_CREAT | O_EXCL``, as a new
    session log is): a file system that makes creating a file slow (ext4 without a journal,
    after a mass delete: up to 0.6 ms a file, against 0.02 with a journal) charges each child
    for it."""
    real = os.open

    def timed(path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if flags & (os.O_CREAT | os.O_EXCL) != os.O_CREAT | os.O_EXCL:
            return real(path, flags, mode, dir_fd=dir_fd)
        started = time.perf_counter()
        try:
            return real(path, flags, mode, dir_fd=dir_fd)
        finally:
            with _COUNT:
                FILE_WORK["created"] += 1
                FILE_WORK["creating"] += time.perf_counter() - started

    os.open = timed


for _name in ("fsync", "fdatasync"):
    if hasattr(os, _name):
        _counted(_name)
_timed_creation()

import agent_host_subagent  # noqa: E402
from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.types import Send  # noqa: E402

from host.agents import ModelRequest, say  # noqa: E402
from host.agents.scripted import calls, tool_call  # noqa: E402
from host.sessions.model import InboxAccepted  # noqa: E402
from host.testing import build_host, call_tool  # noqa: E402

NOTICE = "subagent-settled"


def notices(events: Any) -> list[str]:
    """The children named by the settlement notices accepted in a parent's log."""
    sources = [e.body.source or {} for e in events if isinstance(e.body, InboxAccepted)]
    return [source["sender_session_id"] for source in sources if source.get("kind") == NOTICE]


async def host_run(children: int, data_dir: Path, fsync: str, turn: bool) -> dict[str, Any]:
    """``children`` background delegations from one parent; seconds until all notices are in
    (``turn``: asked for by the parent's model in one response, else called directly)."""
    config = {"plugins": {"session_persistence": {"fsync": fsync}}}
    host = build_host(("subagent", agent_host_subagent), data_dir=data_dir, config=config)
    try:

        def answer(request: ModelRequest) -> Any:
            return say("done" if request.label != "parent" else "noted")

        model = host.services.models.resolve("scripted")
        model.answer_unscripted(answer)
        delegated = asyncio.Event()
        scripted = model.complete

        async def complete(request: ModelRequest, *, signal: Any) -> Any:
            if request.label == "parent":
                await delegated.wait()
            return await scripted(request, signal=signal)

        # The parent is in a turn while it delegates, as when the delegations are its own tool
        # calls: its first model call waits for them, so the notices that arrive meanwhile
        # are answered after it, not each in a turn of its own (children run, settle and
        # notify while their later siblings are still being created).
        tasks = [{"description": f"task {i}", "prompt": f"Do task {i}."} for i in range(children)]
        if turn:
            model.script("parent", calls(*(tool_call("subagent", **args) for args in tasks)))
        else:
            model.complete = complete
        parent = await host.services.agents.create(label="parent")
        noticed = 0
        all_noticed = asyncio.Event()

        def count_notices(session: Any, events: Any) -> None:
            # as they land: scanning the parent's whole log on each pass of a waiting loop
            # costs the event loop O(log) every time it turns, which the host would be
            # charged for (N = 5,000 delegated in one turn: up to 17,000 passes, 2 to 5 s)
            nonlocal noticed
            if session.id == parent.id:
                noticed += len(notices(events))
                if noticed >= children:
                    all_noticed.set()

        stop_counting = host.services.sessions.observe(count_notices)
        SYNCS.clear()
        FILE_WORK.clear()
        started, cpu = time.perf_counter(), time.process_time()
        parent.followup("Delegate the tasks.")
        ids = []
        for index, args in enumerate([] if turn else tasks):
            result = await call_tool(
                host, "subagent", args, agent=parent, tool_call_id=f"call-{index}"
            )
            assert not result.is_error, result.text
            ids.append(result.structured["subagent_id"])
        delegated.set()
        manager = host.services.subagents.manager()
        for child_id in ids:
            activation = manager.activation(child_id)
            if activation is not None:
                await activation.wait_done()
        await all_noticed.wait()
        while parent.status != "idle":
            await parent.wait_idle()
            await asyncio.sleep(0)
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        stop_counting()
        syncs, file_work = Counter(SYNCS), defaultdict(float, FILE_WORK)
        named = notices(parent.session.events)
        if turn:  # the driver made the calls: N distinct children, one notice each
            assert len(named) == len(set(named)) == children, "a child did not notify once"
        else:
            assert sorted(named) == sorted(ids), "a child did not notify its parent exactly once"
        turns = sum(1 for e in parent.session.events if e.kind == "turn/start")
    finally:
        await host.aclose()
    return {
        "seconds": elapsed,
        "cpu": cpu,
        "syncs": syncs,
        "file_work": file_work,
        "parent_turns": turns,
    }


class Fan(TypedDict):
    """The LangGraph parent's state: the tasks, and the answers gathered by the reducer."""

    tasks: list[str]
    answers: Annotated[list[str], operator.add]


class Task(TypedDict):
    """What one ``Send`` hands the child node."""

    task: str


def langgraph_run(children: int, directory: Path) -> tuple[float, float]:
    """Seconds (wall, CPU) for the same fan-out through ``Send`` on the SQLite checkpointer."""
    def fan_out(state: Fan) -> list[Send]:
        return [Send("child", {"task": task}) for task in state["tasks"]]

    def child(state: Task) -> dict[str, list[str]]:
        return {"answers": [f"done {state['task']}"]}

    graph = StateGraph(Fan)
    graph.add_node("child", child)
    graph.add_conditional_edges(START, fan_out, ["child"])
    graph.add_edge("child", END)
    tasks = [f"Do task {index}." for index in range(children)]
    with SqliteSaver.from_conn_string(str(directory / "checkpoints.sqlite")) as saver:
        app = graph.compile(checkpointer=saver)
        started, cpu = time.perf_counter(), time.process_time()
        final = app.invoke({"tasks": tasks, "answers": []}, {"configurable": {"thread_id": "t"}})
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert len(final["answers"]) == children
    return elapsed, cpu


def measure(
    children: int, fsync: str, turn: bool, profiler: cProfile.Profile | None, tmp: Path
) -> float:
    """One round in the fresh directory ``tmp``: the host and LangGraph with ``children``
    children each, printed; returns the ratio of their wall-clock times. Each side starts from
    a collected heap, so neither pays for collecting the other's garbage."""
    home = tmp / "home"
    home.mkdir(parents=True)
    os.environ["HOME"] = os.environ["AGENT_HOST_HOME"] = str(home)
    os.chdir(tmp)  # no project profiles but the bench's own (none)
    gc.collect()
    if profiler is not None:
        profiler.enable()
    ours = asyncio.run(host_run(children, tmp / "data", fsync, turn))
    if profiler is not None:
        profiler.disable()
    gc.collect()
    base, base_cpu = langgraph_run(children, tmp)
    ms, base_ms = ours["seconds"] / children * 1e3, base / children * 1e3
    cpu, base_cpu = ours["cpu"] / children * 1e3, base_cpu / children * 1e3
    syncs, work = ours["syncs"], ours["file_work"]
    per_child = sum(syncs.values()) / children
    detail = ", ".join(f"{name} {count}" for name, count in sorted(syncs.items())) or "none"
    print(
        f"{children} children{' (one turn)' if turn else ''}, fsync={fsync}: "
        f"host {ms:.3f} ms/child (CPU {cpu:.3f}), "
        f"LangGraph Send+SQLite {base_ms:.3f} ms/child (CPU {base_cpu:.3f}), ratio "
        f"{ms / base_ms:.2f} (CPU {cpu / base_cpu:.2f}; target <= 1 at 5,000); host syncs "
        f"{per_child:.2f}/child ({detail}; {work['syncing'] / children * 1e3:.3f} ms/child "
        f"in them), files created {work['created']:.0f} "
        f"({work['creating'] / children * 1e3:.3f} ms/child in their opens); "
        f"parent turns {ours['parent_turns']}"
    )
    return float(ms / base_ms)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--children", type=int, nargs="+", default=[1000, 5000])
    parser.add_argument(
        "--fsync", choices=["never", "turn", "always"], nargs="+", default=["turn", "never"]
    )
    parser.add_argument(
        "--turn", action="store_true", help="delegate from one model response, not directly"
    )
    parser.add_argument("--profile", type=int, metavar="N", help="print N top functions")
    parser.add_argument(
        "--rounds", type=int, default=1, help="rounds per row; their median ratio is printed"
    )
    options = parser.parse_args()
    cwd = os.getcwd()
    saved = {name: os.environ.get(name) for name in ("HOME", "AGENT_HOST_HOME")}
    profiler = cProfile.Profile() if options.profile else None
    # every round's files stay until the run ends (see the module docstring); the
    # directory is left before it is removed
    with tempfile.TemporaryDirectory() as tmp:
        try:
            rounds = (Path(tmp, str(number)) for number in itertools.count())
            for children in options.children:
                for fsync in options.fsync:
                    ratios = [
                        measure(children, fsync, options.turn, profiler, next(rounds))
                        for _ in range(options.rounds)
                    ]
                    if options.rounds > 1:
                        print(
                            f"{children} children, fsync={fsync}: median ratio "
                            f"{statistics.median(ratios):.2f} of {options.rounds} rounds "
                            f"({', '.join(f'{r:.2f}' for r in ratios)})"
                        )
        finally:
            os.chdir(cwd)
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
    if profiler is not None:
        stats = pstats.Stats(profiler)
        stats.sort_stats("cumulative").print_stats(options.profile)
        stats.sort_stats("tottime").print_stats(options.profile)


if __name__ == "__main__":
    main()
