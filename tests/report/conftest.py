"""Fixtures for the report plugin tests: ``env`` (default config) and ``make_env``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.report.support import ReportEnv


@pytest.fixture
async def make_env(tmp_path: Path) -> AsyncIterator[Callable[..., ReportEnv]]:
    """``make_env(**options)`` → a ``ReportEnv`` in its own data directory; closed afterwards."""
    made: list[ReportEnv] = []

    def make(**options: Any) -> ReportEnv:
        env = ReportEnv(tmp_path / f"data{len(made)}", **options)
        made.append(env)
        return env

    yield make
    for env in reversed(made):
        await env.close()


@pytest.fixture
def env(make_env: Callable[..., ReportEnv]) -> ReportEnv:
    """A host with the report plugin at its default configuration."""
    return make_env()
