"""Fixtures of the web console's tests: console servers started in the test's directory (killed
after it) and tabs of one headless chromium (skipped without one, except under ``CI=true``),
launched once for the package: each tab has a fresh browser context of its own (no cookies,
storage or cache shared with any other tab), closed after its test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.appserver.client import Schemas
from tests.appserver.conftest import schemas  # noqa: F401  (the protocol's schema fixture)
from tests.web.browser import Console, ConsoleServer, browser, start


@pytest.fixture
def servers(tmp_path: Path, schemas: Schemas) -> Iterator[Callable[..., ConsoleServer]]:  # noqa: F811
    """``servers(script, policy="")``: a console server in ``tmp_path`` (a second one shares
    the data; ``policy``: more lines of its ``agent-host.toml``, after ``[approvals]``)."""
    started: list[ConsoleServer] = []

    def make(script: dict[str, Any], policy: str = "") -> ConsoleServer:
        made = start(tmp_path, script, schemas, policy)
        started.append(made)
        return made

    yield make
    for server in started:
        server.kill()


@pytest.fixture(scope="package")
def chromium() -> Iterator[Any]:
    """One headless chromium for the package's tests (starting one per test cost seconds each);
    tests share no state through it: every tab is a context of its own."""
    with browser() as launched:
        yield launched


@pytest.fixture
def tabs(chromium: Any) -> Iterator[Callable[..., Console]]:
    """``tabs(width=1440, height=900)``: a new tab of the package's headless chromium, in a
    fresh browser context (closed, with its tab, after the test)."""
    contexts: list[Any] = []

    def tab(width: int = 1440, height: int = 900) -> Console:
        context = chromium.new_context(viewport={"width": width, "height": height})
        contexts.append(context)
        return Console(context.new_page())

    yield tab
    for context in contexts:
        context.close()
