"""The persistence contract runs against every backend: JSONL always, PostgreSQL when
``AGENT_HOST_TEST_POSTGRES_DSN`` names a server (each test gets its own fresh schema).

Without that variable the PostgreSQL half is skipped on a developer machine; under CI
(``CI=true``) a missing DSN is an error instead, so CI can never silently skip the backend.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from host.sessions.persistence import SessionPersistence

DSN_ENV = "AGENT_HOST_TEST_POSTGRES_DSN"
BACKENDS = ["jsonl", "postgres"]


def postgres_dsn() -> str | None:
    """The test server's DSN; fails (does not skip) under CI when it is missing."""
    dsn = os.environ.get(DSN_ENV, "").strip()
    if dsn:
        return dsn
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but {DSN_ENV} is not set: the PostgreSQL backend must be tested")
    return None


class Backend:
    """Builds persistence instances of one kind over one storage location."""

    def __init__(self, kind: str, factory: Callable[[], Any]) -> None:
        self.kind = kind
        self._factory = factory
        self._made: list[Any] = []

    def make(self) -> Any:
        """A fresh persistence instance over the same storage (as a second process would)."""
        made = self._factory()
        self._made.append(made)
        return made

    def close(self) -> None:
        """Close every instance made (the PostgreSQL ones hold a pool and a heartbeat)."""
        for made in self._made:
            close = getattr(made, "close", None)
            if close is not None:
                close()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "jsonl":
        from host.sessions.jsonl import JsonlPersistence

        data_dir = tmp_path / "data"
        yield Backend("jsonl", lambda: JsonlPersistence(data_dir))
        return
    dsn = postgres_dsn()
    if dsn is None:
        pytest.skip(f"{DSN_ENV} is not set (the PostgreSQL half runs in CI)")
    import psycopg
    from agent_host_postgres.persistence import PostgresPersistence

    schema = f"t_{uuid.uuid4().hex[:16]}"
    made = Backend("postgres", lambda: PostgresPersistence(dsn, schema=schema))
    yield made
    made.close()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture
def persistence(backend: Backend) -> SessionPersistence:
    return backend.make()
