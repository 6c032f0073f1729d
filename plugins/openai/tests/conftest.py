"""Fixtures: a scripted OpenAI-compatible server on loopback, a clean environment, a sleep recorder."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from agent_host_openai.testing import ENV_VARS, FakeServer, Sleeps


@pytest.fixture
def server() -> Iterator[FakeServer]:
    fake = FakeServer()
    fake.start()
    yield fake
    fake.stop()


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees the developer's own OpenAI settings."""
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()
