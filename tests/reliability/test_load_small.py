"""A small-scale run of ``bench/load.py``: reports from many children reach the parent exactly
once, in per-child order, while the parent lists and sends; no deadlock (the bench checks all of
this itself and fails loudly; the full 100 × 100 run is in the slow profile and
docs/benchmarks.md "## Load")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.profile import scale

BENCH = Path(__file__).resolve().parents[2] / "bench" / "load.py"


@pytest.mark.slow
def test_reports_reach_the_parent_exactly_once_in_order() -> None:
    children, reports = scale(10, 100), scale(20, 100)
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH),
            "--children",
            str(children),
            "--reports",
            str(reports),
            "--json",
            "--timeout",
            "300",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["reports"] == children * reports
    assert result["parent_lists"] > 0 and result["parent_messages"] > 0
