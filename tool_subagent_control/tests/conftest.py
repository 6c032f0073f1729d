"""Fixtures of the control tool tests: ``ctl``, a host with the control and delegation plugins
(``tests.subagents.control.Ctl``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from host.testing import MakeHarness
from tests.subagents.control import Ctl, make_ctl


@pytest.fixture
def ctl(tmp_path: Path, make_harness: MakeHarness) -> Ctl:
    """A ``Ctl`` over ``tmp_path / "data"``, closed after the test."""
    return make_ctl(tmp_path, make_harness)
