"""Hot-reload benchmark: edit-to-callable latency of ``agent-host dev`` against a restart.

Not a test. Run from the project root with the project venv::

    .venv/bin/python bench/reload.py [--edits N] [--restarts N]

A small plugin distribution (one module + ``*.dist-info``, one tool) is written to a temporary
site directory put on the path; the host is the one ``agent-host dev`` opens (built-ins plus
every installed plugin plus that one). Each edit rewrites the module so that it registers a
tool with a new name, then measures, with ``time.perf_counter``:

* **watcher delay**: from the write returning to ``watchfiles`` handing over the batch;
* **reload work**: ``ReloadLoop.step`` on that batch (plan, ``reload_plugin``, the line);
* **edit-to-callable**: from the write to the new tool answering ``call_tool`` with the new text.

Between edits the bench waits 100 ms and drops stray events, so each edit is measured alone.
This runs twice in the same process: with ``agent-host dev``'s watcher settings (``STEP_MS``,
``DEBOUNCE_MS`` in ``host/cli/dev.py``) and with ``watchfiles``' defaults (step 50 ms,
debounce 1600 ms). The baseline, in the same run, is a full restart: the ``agent-host``
console script running ``tools --json`` with the same site on ``PYTHONPATH`` (a fresh process
that imports, discovers and activates every plugin, then lists the new tool).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from host.app import Host, open_host  # noqa: E402
from host.cli.dev import DEBOUNCE_MS, STEP_MS, Watcher  # noqa: E402
from host.plugins.watch import PendingChanges, ReloadLoop, WatchMap  # noqa: E402
from host.testing import call_tool  # noqa: E402
from tests.distributions import write_distribution  # noqa: E402

MODULE = "bench_reload_plugin"
PLUGIN = "bench_reload"
SOURCE = """
import attrs
from host import hookimpl
from host.tools import tool

@attrs.frozen
class Args:
    pass

@tool("edit_{n}", "Answer with the edit number.", Args)
async def answer(args, exec):
    return "edit {n}"

@hookimpl
def register_tools(register):
    register(answer)
"""


async def measure_edits(
    host: Host, site: Path, edits: int, step: int, debounce: int
) -> dict[str, list[float]]:
    """Per edit: watcher delay, reload work and edit-to-callable, in ms."""
    lines: list[str] = []
    watch_map = WatchMap(host.plugins)
    loop = ReloadLoop(watch_map, lines.append)
    pending = PendingChanges()
    watcher = Watcher([site], step=step, debounce=debounce)
    await watcher.start()  # every watch in place

    async def pump() -> None:
        async for batch in watcher:
            pending.add(batch)

    task = asyncio.ensure_future(pump())
    figures: dict[str, list[float]] = {"watcher": [], "reload": [], "callable": []}
    try:
        for n in range(1, edits + 2):  # the first edit is a warm-up
            await asyncio.sleep(0.1)
            pending.take_now()
            started = time.perf_counter()
            (site / f"{MODULE}.py").write_text(SOURCE.format(n=n))
            written = time.perf_counter()
            batch = await pending.take()
            arrived = time.perf_counter()
            loop.step(batch)
            reloaded = time.perf_counter()
            result = await call_tool(host, f"edit_{n}", {}, agent=object())
            done = time.perf_counter()
            if result.text != f"edit {n}" or not lines[-1].startswith("reloaded "):
                raise SystemExit(f"reload.py: edit {n} not live: {lines[-1]!r} {result.text!r}")
            if n > 1:
                figures["watcher"].append((arrived - written) * 1000)
                figures["reload"].append((reloaded - arrived) * 1000)
                figures["callable"].append((done - started) * 1000)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await watcher.aclose()
    return figures


def measure_restarts(site: Path, workdir: Path, runs: int) -> list[float]:
    """Wall time of ``agent-host tools --json`` with the site on PYTHONPATH, in ms."""
    script = Path(sys.executable).parent / "agent-host"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_HOST_")}
    env["PYTHONPATH"] = str(site)
    env["AGENT_HOST_DATA_DIR"] = str(workdir / "restart-data")
    times: list[float] = []
    for index in range(runs + 1):  # the first run is a warm-up (bytecode caches)
        started = time.perf_counter()
        done = subprocess.run(
            [str(script), "tools", "--json"], cwd=workdir, env=env, capture_output=True, text=True
        )
        elapsed = (time.perf_counter() - started) * 1000
        if done.returncode != 0 or '"edit_' not in done.stdout:
            raise SystemExit(f"reload.py: restart run failed: {done.stderr.strip()}")
        if index:
            times.append(elapsed)
    return times


def median(values: list[float]) -> float:
    return statistics.median(values)


async def run(edits: int, restarts: int) -> None:
    with tempfile.TemporaryDirectory() as temp:
        workdir = Path(temp)
        site = workdir / "site"
        write_distribution(
            site,
            "bench-reload-plugin",
            entry_points={PLUGIN: MODULE},
            modules={MODULE: SOURCE.format(n=0)},
        )
        sys.path.insert(0, str(site))
        os.chdir(workdir)
        host = open_host(data_dir=workdir / "data", environ={})
        try:
            assert host.plugins.records[PLUGIN].state == "active"
            plugins = len(host.plugins.records)
            ours = await measure_edits(host, site, edits, STEP_MS, DEBOUNCE_MS)
            default = await measure_edits(host, site, edits, 50, 1600)
        finally:
            await host.aclose()
        restart = measure_restarts(site, workdir, restarts)

    restart_ms = median(restart)
    print(f"{plugins} plugins; {edits} edits per setting; {restarts} restarts (medians, ms)")
    print("| watcher setting | watcher delay | reload work | edit-to-callable | vs restart |")
    print("|---|---|---|---|---|")
    for name, figures in (
        (f"step {STEP_MS}, debounce {DEBOUNCE_MS} (dev)", ours),
        ("step 50, debounce 1600 (default)", default),
    ):
        callable_ms = median(figures["callable"])
        print(
            f"| {name} | {median(figures['watcher']):.1f} | {median(figures['reload']):.1f} "
            f"| {callable_ms:.1f} | {restart_ms / callable_ms:.1f}x faster |"
        )
    print(f"| full restart (`agent-host tools --json`) | | | {restart_ms:.1f} | 1.0x |")
    reload_ms, callable_ms = median(ours["reload"]), median(ours["callable"])
    print(
        f"targets: reload work < 50 ms: {'met' if reload_ms < 50 else 'missed'}; "
        f"edit-to-callable < 150 ms: {'met' if callable_ms < 150 else 'missed'}; "
        f">= 5x faster than restart: {'met' if restart_ms / callable_ms >= 5 else 'missed'}"
    )
    print(
        f"reload work max {max(ours['reload']):.1f} ms, edit-to-callable max "
        f"{max(ours['callable']):.1f} ms, restart min {min(restart):.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--restarts", type=int, default=10)
    args = parser.parse_args()
    asyncio.run(run(args.edits, args.restarts))


if __name__ == "__main__":
    main()
