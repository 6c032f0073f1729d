"""Fixtures of the web console's tests: console servers started in the test's directory (killed
after it) and a headless chromium (skipped without one, except under ``CI=true``)."""

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


@pytest.fixture
def tabs() -> Iterator[Callable[..., Console]]:
    """``tabs(width=1440, height=900)``: a new tab of one headless chromium."""
    with browser() as launched:

        def tab(width: int = 1440, height: int = 900) -> Console:
            return Console(launched.new_page(viewport={"width": width, "height": height}))

        yield tab
