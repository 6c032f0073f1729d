"""Fixtures of the subagent tests: ``world`` (``tests.subagents.harness.World``) over tmp_path.

The store and agents fixtures of ``tests.fixtures`` serve the continuable setup tests; the
``env`` fixture (a whole host) is in ``tests/conftest.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures import *  # noqa: F403 - the store and agents fixtures, for test_setup
from tests.subagents.harness import World


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)
