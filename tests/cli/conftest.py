"""Fixtures of the command-line tests: a real OpenAI-compatible server on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from agent_host_openai.testing import FakeServer


@pytest.fixture
def server() -> Iterator[FakeServer]:
    """A started ``FakeServer``; stopped after the test."""
    made = FakeServer()
    made.start()
    yield made
    made.stop()
