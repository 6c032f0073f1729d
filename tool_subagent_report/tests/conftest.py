"""Fixtures for the report plugin tests: ``env`` (default config) and ``make_env``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from host.testing import MakeHarness
from tests.subagents.report import ReportEnv


@pytest.fixture
def make_env(make_harness: MakeHarness) -> Callable[..., ReportEnv]:
    """``make_env(**options)`` → a ``ReportEnv`` in its own data directory; closed afterwards."""

    def make(**options: Any) -> ReportEnv:
        env = make_harness(cls=ReportEnv, **options)
        assert isinstance(env, ReportEnv)
        return env

    return make


@pytest.fixture
def env(make_env: Callable[..., ReportEnv]) -> ReportEnv:
    """A host with the report plugin at its default configuration."""
    return make_env()
