"""The workspace ``grep`` tool over a 10,000-file tree, against the commands it stands for.

Not a test. Run from the project root with the project venv::

    .venv/bin/python bench/workspace.py [--files N] [--rounds N]

The tree (generated in a temporary directory): ``--files`` text files of 40 lines (about
2 KB each) in folders of 100, one file in 100 holding the word searched for, and a
``.gitignore``. Measured in the same run, in interleaved rounds (median of ``--rounds``):

* ``rg`` — the command the tool runs when ``rg`` is installed, with the tool's flags, as a
  subprocess whose output is read whole;
* ``tool (rg)`` — the tool's search with ``rg`` (``agent_host_workspace.search.grep``: spawn,
  read, cut, render);
* ``grep -rn`` — the classic command over the same tree;
* ``tool (python)`` — the tool's pure-Python fallback.

Targets (issue): tool (rg) ÷ rg ≤ 1.3; tool (python) ÷ grep -rn ≤ 3.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agent_host_workspace.paths import Root
from agent_host_workspace.search import RG_FLAGS, grep

WORD = "needle_in_the_tree"
LINE = "def function_{n}(value):  # ordinary code that does not hold the word searched for\n"


def make_tree(base: Path, files: int) -> None:
    """``files`` text files in folders of 100; one in 100 holds ``WORD``."""
    (base / ".gitignore").write_text("*.tmp\n")
    for number in range(files):
        folder = base / f"pkg{number // 100:03}"
        folder.mkdir(exist_ok=True)
        lines = [LINE.format(n=n) for n in range(40)]
        if number % 100 == 7:
            lines[20] = f"    return {WORD}\n"
        (folder / f"module{number:05}.py").write_text("".join(lines))


def timed(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def command(arguments: list[str], cwd: Path) -> Callable[[], object]:
    return lambda: subprocess.run(arguments, cwd=cwd, capture_output=True, check=False)


def tool(root: Root, rg: str | None) -> Callable[[], object]:
    return lambda: asyncio.run(grep(root, rg, WORD, None, None, 0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=7)
    options = parser.parse_args()
    rg = shutil.which("rg")
    with tempfile.TemporaryDirectory() as directory:
        base = Path(directory)
        make_tree(base, options.files)
        root = Root(base)
        runs: dict[str, Callable[[], object]] = {
            "grep -rn": command(["grep", "-rn", WORD, "."], base),
            "tool (python)": tool(root, None),
        }
        if rg is not None:
            runs["rg"] = command([rg, *RG_FLAGS, "--context=0", "--regexp", WORD, "--", "./"], base)
            runs["tool (rg)"] = tool(root, rg)
        found = asyncio.run(grep(root, None, WORD, None, None, 0))
        assert found.count("\n") + 1 == options.files // 100, found
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(options.rounds):
            for name, run in runs.items():
                times[name].append(timed(run))
    median = {name: statistics.median(values) for name, values in times.items()}
    for name, value in median.items():
        print(f"{name:14} {value * 1000:8.1f} ms (min {min(times[name]) * 1000:.1f} ms)")
    fallback = median["tool (python)"] / median["grep -rn"]
    print(f"tool (python) ÷ grep -rn: {fallback:.2f} (target ≤ 3)")
    if rg is not None:
        print(f"tool (rg) ÷ rg:           {median['tool (rg)'] / median['rg']:.2f} (target ≤ 1.3)")
    else:
        print("rg is not installed: tool (rg) not measured")


if __name__ == "__main__":
    main()
