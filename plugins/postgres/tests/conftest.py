"""Fixtures: a fresh PostgreSQL schema per test on the server named by
``AGENT_HOST_TEST_POSTGRES_DSN`` (skipped without it on a developer machine; an error under
``CI=true``), and a clean environment."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
from agent_host_postgres import DSN_ENV

TEST_DSN_ENV = "AGENT_HOST_TEST_POSTGRES_DSN"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees the developer's own DSN or plugin selection."""
    for name in (DSN_ENV, "AGENT_HOST_DISABLE_PLUGINS", "AGENT_HOST_PLUGINS"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def dsn() -> str:
    value = os.environ.get(TEST_DSN_ENV, "").strip()
    if value:
        return value
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but {TEST_DSN_ENV} is not set: the PostgreSQL tests must run")
    pytest.skip(f"{TEST_DSN_ENV} is not set")


@pytest.fixture
def schema(dsn: str) -> Iterator[str]:
    import psycopg

    name = f"t_{uuid.uuid4().hex[:16]}"
    yield name
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
