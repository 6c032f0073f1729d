"""The slow profile switch (``tests.profile``): ``--slow`` or ``AGENT_HOST_SLOW=1``, nothing else."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import profile

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("value", ["0", "", "yes", "true", "01", " 1", "1 "])
def test_other_values_of_the_variable_leave_it_off(value: str) -> None:
    assert profile.requested(False, {profile.ENV: value}) is False


def test_the_option_or_the_variable_set_to_1_selects_it() -> None:
    assert profile.requested(False, {}) is False
    assert profile.requested(True, {}) is True
    assert profile.requested(True, {profile.ENV: "0"}) is True
    assert profile.requested(False, {profile.ENV: "1"}) is True


def test_this_run_uses_the_profile_its_option_and_environment_select(
    pytestconfig: pytest.Config,
) -> None:
    assert profile.SLOW is profile.requested(bool(pytestconfig.getoption("--slow")))
    assert profile.scale(1, 2) == (2 if profile.SLOW else 1)


def test_a_plugins_own_tests_take_the_option_too() -> None:
    """``pytest plugins/<name>/tests --slow`` as the README gives it for the whole suite: the
    option is the repository's, not only ``tests/``'s."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    env.pop(profile.ENV, None)
    command = [sys.executable, "-m", "pytest", "plugins/example/tests", "--slow"]
    done = subprocess.run(
        [*command, "--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    assert "unrecognized arguments" not in done.stderr
