"""Start-up benchmark: wall time of ``agent-host plugins --json`` against the dependency floor.

Not a test. Run from the project root with the project venv::

    .venv/bin/python bench/startup.py [--runs N] [--extra N]

Three scenarios, each measured as interleaved subprocess runs (order alternates every round,
one discarded warm-up run of each first so bytecode caches are written):

* ``installed``: the first-party plugins as installed in the venv;
* ``+N dists``: the same, plus N tiny distributions that are not plugins of the host (a module
  + ``*.dist-info`` with METADATA, a third of them with console scripts in
  ``entry_points.txt``), as in any environment with more packages installed: the host scans
  them all and imports none;
* ``+N plugins``: the same, plus N tiny plugin distributions (entry points in group
  ``agent_host.plugins``, one no-op ``activate`` hook each): the host imports, registers,
  activates and lists every one.

The extra distributions are written with ``tests/distributions.py:write_distribution`` into a
temporary directory put on PYTHONPATH for every command of the scenario. The host command is
the console script next to ``sys.executable`` (what a user runs); the floor is
``sys.executable -c "import pluggy, attrs, cattrs, asyncio"``. In the plugins scenario a third
command, the floor plus importing the N plugin modules (no host at all), shows how much of the
overhead the plugins' own imports are. Everything runs in a clean environment (no
``AGENT_HOST_*`` variables) from an empty temporary working directory, so no
``agent-host.toml`` is read. Times are ``time.perf_counter`` around ``subprocess.run``.

The target (host − floor ≤ 50 ms, median) is checked for ``installed`` and ``+N dists``; the
plugins scenario prints its overhead and the part the plugins' own imports take.

A last comparison measures the marginal load cost of one plugin against pytest's, in the same
run: ``agent-host plugins --json`` bare and with N function-tool plugins (each a module with one
``@tool`` function of two typed parameters and a docstring, registered by ``register_tools``),
beside ``python -m pytest --help`` bare and with N ``pytest11`` plugins (each a module with
one ``pytest_configure`` hook; pytest loads its entry-point plugins to list their options,
which ``--version`` does not do). Cost per plugin = (with N − bare) / N, medians; the target
is host ≤ pytest.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.distributions import write_distribution  # noqa: E402

TARGET_MS = 50.0
FLOOR_CODE = "import pluggy, attrs, cattrs, asyncio"

PLUGIN_SOURCE = """
from host import hookimpl

@hookimpl
def activate(ctx, scope, config):
    pass
"""


FUNCTION_TOOL_SOURCE = '''
from host import hookimpl
from host.tools import tool

@tool
async def note_{i:03d}(text: str, tags: list[str] | None = None) -> str:
    """Add a note.

    Args:
        text: The note's text.
        tags: Labels to file it under.
    """
    return text

@hookimpl
def register_tools(register):
    register(note_{i:03d})
'''

PYTEST_PLUGIN_SOURCE = """
def pytest_configure(config):
    pass
"""


def host_command() -> list[str]:
    """The ``agent-host`` console script installed next to the running interpreter."""
    script = Path(sys.executable).parent / "agent-host"
    if not script.exists():
        sys.exit(f"startup.py: no console script at {script}; run with the project venv python")
    return [str(script), "plugins", "--json"]


def floor_command() -> list[str]:
    return [sys.executable, "-c", FLOOR_CODE]


def clean_env(pythonpath: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_HOST_")}
    env.pop("PYTHONPATH", None)
    # As a user runs it: with cached bytecode. Without it every host module is compiled on
    # every start while the floor's packages keep the pyc files pip wrote for them.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return env


def write_libraries(site: Path, count: int) -> None:
    """``count`` tiny distributions ``bench-lib-NNN`` in ``site`` that are not host plugins."""
    for i in range(count):
        module = f"bench_lib_{i:03d}"
        scripts = {module.replace("_", "-"): f"{module}:main"} if i % 3 == 0 else {}
        write_distribution(
            site,
            f"bench-lib-{i:03d}",
            entry_points=scripts,
            modules={module: "def main():\n    pass\n"},
            group="console_scripts",
        )


def write_plugins(
    site: Path,
    count: int,
    kind: str = "plugin",
    source: str = PLUGIN_SOURCE,
    group: str = "agent_host.plugins",
) -> None:
    """``count`` one-module distributions ``bench-<kind>-NNN`` in ``site``, each with an entry
    point in ``group`` naming its module; ``source`` is formatted with the index ``i``."""
    for i in range(count):
        module = f"bench_{kind}_{i:03d}"
        write_distribution(
            site,
            f"bench-{kind}-{i:03d}",
            entry_points={module: module},
            modules={module: source.format(i=i)},
            group=group,
        )


def timed(cmd: Sequence[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    start = time.perf_counter()
    result = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=60)
    elapsed = (time.perf_counter() - start) * 1000.0
    if result.returncode != 0:
        sys.exit(f"startup.py: {' '.join(cmd)} failed ({result.returncode}):\n{result.stderr}")
    return elapsed, result.stdout


def check_output(stdout: str, expect_extra: int) -> int:
    """Sanity: the host listed the plugins we think it did. Returns the number of rows."""
    rows = json.loads(stdout)
    extra = [r for r in rows if str(r["name"]).startswith("bench_")]
    if len(extra) != expect_extra:
        sys.exit(f"startup.py: expected {expect_extra} extra plugins, host listed {len(extra)}")
    inactive = [r["name"] for r in extra if r["state"] != "active"]
    if inactive:
        sys.exit(f"startup.py: extra plugins not active: {inactive[:5]}…")
    return len(rows)


def imports_command(extra: int) -> list[str]:
    """The floor plus importing the ``extra`` plugin modules, and nothing of the host."""
    code = f"{FLOOR_CODE}\nfor i in range({extra}):\n    __import__(f'bench_plugin_{{i:03d}}')"
    return [sys.executable, "-c", code]


def measure(
    runs: int, cwd: Path, pythonpath: Path | None, plugins: int
) -> dict[str, list[float] | int]:
    """Times of the host, the floor and (with ``plugins``) the imports baseline, in ms."""
    env = clean_env(pythonpath)
    commands = {"host": host_command(), "floor": floor_command()}
    if plugins:
        commands["imports"] = imports_command(plugins)
    n_rows = check_output(timed(commands["host"], env, cwd)[1], plugins)
    times = interleaved(runs, {name: (cmd, env) for name, cmd in commands.items()}, cwd)
    return {"rows": n_rows, **times}


def interleaved(
    runs: int, commands: dict[str, tuple[list[str], dict[str, str]]], cwd: Path
) -> dict[str, list[float]]:
    """Times (ms) of ``runs`` rounds of every command, the order reversed every other round,
    after one discarded warm-up run each (it writes ``__pycache__`` for the tiny modules)."""
    for cmd, env in commands.values():
        timed(cmd, env, cwd)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for i in range(runs):
        order = list(commands.items())
        if i % 2:
            order.reverse()
        for name, (cmd, env) in order:
            times[name].append(timed(cmd, env, cwd)[0])
    return times


@dataclass
class Summary:
    """One scenario's minimum and median times (ms) and the host's overhead."""

    scenario: str
    rows: int
    floor: list[float]
    host: list[float]
    imports: list[float] | None = None

    def stat(self, times: list[float], kind: str) -> float:
        return min(times) if kind == "min" else statistics.median(times)

    def diff(self, kind: str) -> float:
        return self.stat(self.host, kind) - self.stat(self.floor, kind)


def summarize(scenario: str, data: dict[str, list[float] | int]) -> Summary:
    rows, host, floor, imports = data["rows"], data["host"], data["floor"], data.get("imports")
    assert isinstance(rows, int) and isinstance(host, list) and isinstance(floor, list)
    assert imports is None or isinstance(imports, list)
    return Summary(scenario, rows, floor, host, imports)


def print_table(results: list[Summary], runs: int, targeted: int) -> None:
    print(
        f"\nruns per command: {runs} (interleaved), times in ms, "
        f"target: host − floor ≤ {TARGET_MS:.0f} ms (median) for the first {targeted} scenarios"
    )
    print(
        "| scenario | plugins listed | floor min | floor median | host min | host median "
        "| Δ min | Δ median | ratio (median) | target |"
    )
    print("|---" * 10 + "|")
    for index, r in enumerate(results):
        verdict = "met" if r.diff("median") <= TARGET_MS else "MISSED"
        f_med, h_med = r.stat(r.floor, "median"), r.stat(r.host, "median")
        print(
            f"| {r.scenario} | {r.rows} | {min(r.floor):.1f} | {f_med:.1f} "
            f"| {min(r.host):.1f} | {h_med:.1f} | {r.diff('min'):+.1f} "
            f"| {r.diff('median'):+.1f} | {h_med / f_med:.2f}x "
            f"| {verdict if index < targeted else '(scaling)'} |"
        )


def print_plugin_costs(plugins: Summary, count: int) -> None:
    """What the plugins scenario spends: the plugins' own imports, and the host over them."""
    assert plugins.imports is not None
    for kind in ("min", "median"):
        imports = plugins.stat(plugins.imports, kind) - plugins.stat(plugins.floor, kind)
        host_over = plugins.stat(plugins.host, kind) - plugins.stat(plugins.imports, kind)
        print(
            f"+{count} plugins ({kind}): importing the plugin modules alone (floor + imports, "
            f"no host) {imports:+.1f} ms over the floor; the host over that {host_over:+.1f} ms"
        )


def measure_marginal(runs: int, cwd: Path, tmp: Path, count: int) -> dict[str, list[float]]:
    """Interleaved times (ms) of the host and pytest, each bare and with ``count`` plugins."""
    write_plugins(tmp / "tools", count, "tools", FUNCTION_TOOL_SOURCE)
    write_plugins(tmp / "pytest", count, "pytest", PYTEST_PLUGIN_SOURCE, group="pytest11")
    pytest_cmd = [sys.executable, "-m", "pytest", "--help", "-p", "no:cacheprovider"]
    commands = {
        "host": (host_command(), clean_env(None)),
        "host+plugins": (host_command(), clean_env(tmp / "tools")),
        "pytest": (pytest_cmd, clean_env(None)),
        "pytest+plugins": (pytest_cmd, clean_env(tmp / "pytest")),
    }
    rows = json.loads(timed(*commands["host+plugins"], cwd)[1])
    tools = [r for r in rows if str(r["name"]).startswith("bench_tools_")]
    if len(tools) != count or any(r["state"] != "active" or not r["tools"] for r in tools):
        sys.exit("startup.py: the function-tool plugins did not all activate with their tool")
    return interleaved(runs, commands, cwd)


def print_marginal(times: dict[str, list[float]], count: int) -> None:
    """Marginal cost per plugin (µs), host against pytest, from medians and minimums."""
    print(f"\nmarginal load cost per plugin ({count} plugins, µs): host (function tools) vs pytest")
    for kind, stat in (("median", statistics.median), ("min", min)):
        host = (stat(times["host+plugins"]) - stat(times["host"])) * 1000.0 / count
        pytest = (stat(times["pytest+plugins"]) - stat(times["pytest"])) * 1000.0 / count
        verdict = "met" if host <= pytest else "MISSED"
        print(
            f"  {kind}: host {host:.0f} µs, pytest {pytest:.0f} µs, "
            f"ratio {host / pytest:.2f} (target host ≤ pytest: {verdict})"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="runs per command (default 20)")
    parser.add_argument(
        "--extra", type=int, default=300, help="extra tiny distributions (default 300)"
    )
    args = parser.parse_args(argv)
    if args.extra < 1:
        parser.error("--extra must be at least 1")
    print(f"python: {sys.executable} ({sys.version.split()[0]}), cpus: {os.cpu_count()}")
    print(f"host:   {' '.join(host_command())}")
    print(f"floor:  {sys.executable} -c {FLOOR_CODE!r}")
    with tempfile.TemporaryDirectory(prefix="agent-host-bench-") as tmp:
        tmp_path = Path(tmp)
        cwd = tmp_path / "cwd"
        cwd.mkdir()
        installed = summarize("installed", measure(args.runs, cwd, None, 0))
        write_libraries(tmp_path / "dists", args.extra)
        dists = summarize(f"+{args.extra} dists", measure(args.runs, cwd, tmp_path / "dists", 0))
        write_plugins(tmp_path / "plugins", args.extra)
        plugins = summarize(
            f"+{args.extra} plugins", measure(args.runs, cwd, tmp_path / "plugins", args.extra)
        )
        marginal = measure_marginal(args.runs, cwd, tmp_path, args.extra)
    targeted = [installed, dists]
    print_table([*targeted, plugins], args.runs, len(targeted))
    print()
    print_plugin_costs(plugins, args.extra)
    worst = max(r.diff("median") for r in targeted)
    verdict = "within" if worst <= TARGET_MS else "exceeds"
    print(f"\nworst median overhead: {worst:+.1f} ms ({verdict} the {TARGET_MS:.0f} ms target)")
    print_marginal(marginal, args.extra)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
