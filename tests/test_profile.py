"""The slow profile switch (``tests.profile``): ``--slow`` or ``AGENT_HOST_SLOW=1``, nothing else."""

from __future__ import annotations

import pytest

from tests import profile


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
