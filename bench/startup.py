"""Start-up benchmark: wall time of ``agent-host plugins --json`` against the dependency floor.

Not a test. Run from the project root with the project venv::

    .venv/bin/python bench/startup.py [--runs N] [--extra N]

Two scenarios, each measured as interleaved subprocess runs (order alternates every round,
one discarded warm-up run of each first so bytecode caches are written):

* ``installed``: the first-party plugins as installed in the venv;
* ``+N dists``: the same, plus N tiny plugin distributions (a module + ``*.dist-info``
  with METADATA and entry_points.txt in group ``agent_host.plugins``, written with
  ``tests/distributions.py:write_distribution``) in a temporary directory put on PYTHONPATH
  for both the host run and the floor run.

The host command is the console script next to ``sys.executable`` (what a user runs); the
floor is ``sys.executable -c "import pluggy, attrs, cattrs, asyncio"``. With extra
distributions a third command, the floor plus importing their N modules (no host at all), shows
how much of the overhead the plugins' own imports are. Both run in a clean
environment (no ``AGENT_HOST_*`` variables) from an empty temporary working directory, so no
``agent-host.toml`` is read. Times are ``time.perf_counter`` around ``subprocess.run``.
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


def write_extra(site: Path, count: int) -> None:
    """``count`` tiny plugin distributions ``bench-plugin-NNN`` in ``site``."""
    for i in range(count):
        module = f"bench_plugin_{i:03d}"
        write_distribution(
            site,
            f"bench-plugin-{i:03d}",
            entry_points={module: module},
            modules={module: PLUGIN_SOURCE},
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
    extra = [r for r in rows if str(r["name"]).startswith("bench_plugin_")]
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


def measure(runs: int, cwd: Path, pythonpath: Path | None, extra: int) -> dict[str, object]:
    env = clean_env(pythonpath)
    commands = {"host": host_command(), "floor": floor_command()}
    if extra:
        commands["imports"] = imports_command(extra)
    # Warm-up (discarded): writes __pycache__ for the tiny plugins, checks the output.
    for name, cmd in commands.items():
        _, out = timed(cmd, env, cwd)
        if name == "host":
            n_rows = check_output(out, extra)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for i in range(runs):
        order = list(commands.items())
        if i % 2:
            order.reverse()
        for name, cmd in order:
            times[name].append(timed(cmd, env, cwd)[0])
    return {"rows": n_rows, **times}


def summarize(name: str, data: dict[str, object]) -> dict[str, float | str | int]:
    host = data["host"]
    floor = data["floor"]
    assert isinstance(host, list) and isinstance(floor, list)
    f_min, f_med = min(floor), statistics.median(floor)
    h_min, h_med = min(host), statistics.median(host)
    return {
        "scenario": name,
        "plugins": int(data["rows"]),  # type: ignore[call-overload]
        "floor_min": f_min,
        "floor_med": f_med,
        "host_min": h_min,
        "host_med": h_med,
        "diff_min": h_min - f_min,
        "diff_med": h_med - f_med,
        "ratio_med": h_med / f_med,
    }


def print_table(results: list[dict[str, float | str | int]], runs: int) -> None:
    print(
        f"\nruns per command: {runs} (interleaved), times in ms, "
        f"target: host − floor ≤ {TARGET_MS:.0f} ms"
    )
    header = (
        "| scenario | plugins listed | floor min | floor median | host min | host median "
        "| Δ min | Δ median | ratio (median) | target |"
    )
    print(header)
    print("|---" * 10 + "|")
    for r in results:
        ok = "met" if float(r["diff_med"]) <= TARGET_MS else "MISSED"
        print(
            f"| {r['scenario']} | {r['plugins']} | {r['floor_min']:.1f} | {r['floor_med']:.1f} "
            f"| {r['host_min']:.1f} | {r['host_med']:.1f} | {r['diff_min']:+.1f} "
            f"| {r['diff_med']:+.1f} | {r['ratio_med']:.2f}x | {ok} |"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="runs per command (default 20)")
    parser.add_argument(
        "--extra", type=int, default=300, help="extra tiny distributions (default 300)"
    )
    args = parser.parse_args(argv)
    print(f"python: {sys.executable} ({sys.version.split()[0]}), cpus: {os.cpu_count()}")
    print(f"host:   {' '.join(host_command())}")
    print(f"floor:  {sys.executable} -c {FLOOR_CODE!r}")
    results = []
    with tempfile.TemporaryDirectory(prefix="agent-host-bench-") as tmp:
        tmp_path = Path(tmp)
        cwd = tmp_path / "cwd"
        cwd.mkdir()
        results.append(summarize("installed", measure(args.runs, cwd, None, 0)))
        site = tmp_path / "site"
        write_extra(site, args.extra)
        extra_data = measure(args.runs, cwd, site, args.extra)
        results.append(summarize(f"+{args.extra} dists", extra_data))
    print_table(results, args.runs)
    imports = extra_data.get("imports")
    if isinstance(imports, list):
        i_min, i_med = min(imports), statistics.median(imports)
        r = results[-1]
        print(
            f"\nbaseline without the host: floor + importing the {args.extra} plugin modules: "
            f"min {i_min:.1f}, median {i_med:.1f} ms (Δ over the floor "
            f"{i_min - float(r['floor_min']):+.1f} / {i_med - float(r['floor_med']):+.1f}); "
            f"the host over it: {float(r['host_min']) - i_min:+.1f} / "
            f"{float(r['host_med']) - i_med:+.1f} ms (min / median)"
        )
    worst = max(float(r["diff_med"]) for r in results)
    verdict = "within" if worst <= TARGET_MS else "exceeds"
    print(f"\nworst median overhead: {worst:+.1f} ms ({verdict} the {TARGET_MS:.0f} ms target)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
