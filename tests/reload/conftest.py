"""Fixtures for the hot-reload tests: editable throwaway plugins and hosts closed afterwards."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from host.app import Host
from tests.reload.support import Plugins, open_host


@pytest.fixture
def plugins(site: Callable[..., str], unique: Callable[[str], str], tmp_path: Path) -> Plugins:
    """Throwaway plugin distributions (module + dist-info) in the test's site directory."""
    return Plugins(site, unique, tmp_path)


@pytest.fixture
async def dev_host(tmp_path: Path) -> AsyncIterator[Callable[..., Host]]:
    """``dev_host({"names"}, *extra)``: built-ins plus those installed plugins; closed after."""
    made: list[Host] = []

    def make(names: set[str], *extra: Any) -> Host:
        host = open_host(tmp_path / f"data{len(made)}", names, *extra)
        made.append(host)
        return host

    yield make
    for host in reversed(made):
        await host.aclose()
