"""The repository's pytest options, for every test directory (``tests/`` and each plugin's
own): ``--slow`` selects the slow profile (``tests.profile``), settled before any test module is
imported."""

from __future__ import annotations

import pytest

from tests import profile


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true", help="run the long trials as well")


def pytest_configure(config: pytest.Config) -> None:
    """Settle the slow profile (``tests.profile``) before any test module is imported."""
    profile.SLOW = profile.requested(bool(config.getoption("--slow")))
