"""Running mypy on plugin code the way an author would: ``mypy --strict`` over a few modules.

The run is in process (``mypy.api.run``) from the project root with the project's mypy
configuration (``pyproject.toml``: strict) and its cache, so the host's own modules come from
the cache that ``.venv/bin/mypy`` (and CI, before the tests) leaves: a warm run takes about
half a second, a cold one a few seconds. Errors are told apart by file name: mypy replays the
errors it cached for an unchanged module under the path it had then (a test's earlier tmp_path).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import attrs
from mypy import api

ROOT = Path(__file__).resolve().parents[1]
ERROR = re.compile(r"(?P<path>[^:\n]+):(?P<line>\d+): error: (?P<message>.*)")


@attrs.frozen
class MypyRun:
    """What one run reported: ``errors`` maps a file name to ``(line, message)`` pairs."""

    errors: dict[str, list[tuple[int, str]]]
    report: str
    seconds: float

    def lines(self, path: Path) -> set[int]:
        """The lines of ``path`` with an error."""
        return {line for line, _ in self.errors.get(path.name, [])}

    def messages(self, path: Path) -> list[str]:
        """The error messages about ``path``."""
        return [message for _, message in self.errors.get(path.name, [])]


@contextmanager
def _in_root() -> Iterator[None]:
    before = Path.cwd()
    os.chdir(ROOT)
    try:
        yield
    finally:
        os.chdir(before)


def marked(source: str) -> set[int]:
    """The line numbers (from 1) of ``source`` that carry ``# wrong``."""
    return {n for n, line in enumerate(source.splitlines(), 1) if line.endswith("# wrong")}


def right_and_wrong(directory: Path, stem: str, right: str, wrong: str) -> list[str]:
    """Type-check ``right`` and ``wrong`` (sources written to ``directory``): asserts that
    ``right`` has no error and ``wrong`` one on exactly each line marked ``# wrong``; returns
    the messages about ``wrong``."""
    right_path, wrong_path = directory / f"{stem}_right.py", directory / f"{stem}_wrong.py"
    right_path.write_text(right)
    wrong_path.write_text(wrong)
    run = run_mypy(right_path, wrong_path)
    assert run.lines(right_path) == set(), run.report
    assert run.lines(wrong_path) == marked(wrong), run.report
    assert run.seconds < 20, f"mypy took {run.seconds:.1f} s"
    return run.messages(wrong_path)


def run_mypy(*paths: Path) -> MypyRun:
    """Type-check ``paths`` (absolute) with the project's strict configuration."""
    started = time.perf_counter()
    with _in_root():
        stdout, stderr, _ = api.run(
            ["--config-file", str(ROOT / "pyproject.toml"), *(str(p) for p in paths)]
        )
    seconds = time.perf_counter() - started
    errors: dict[str, list[tuple[int, str]]] = {}
    for match in ERROR.finditer(stdout):
        name = Path(match["path"]).name
        errors.setdefault(name, []).append((int(match["line"]), match["message"]))
    assert not stderr, stderr
    return MypyRun(errors, stdout, seconds)
