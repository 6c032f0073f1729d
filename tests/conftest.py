"""Shared fixtures: throwaway distributions on the path, the slow profile switch."""

from __future__ import annotations

import importlib
import itertools
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.distributions import write_distribution

_unique = itertools.count()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true", help="run the long trials as well")


def slow_enabled(config: pytest.Config) -> bool:
    """True when the slow profile is selected (``--slow`` or ``AGENT_HOST_SLOW=1``)."""
    return bool(config.getoption("--slow")) or os.environ.get("AGENT_HOST_SLOW") == "1"


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., str]]:
    """``site(name?, entry_points=…, modules=…)`` installs a throwaway distribution.

    The distribution lives in a temporary site directory put first on ``sys.path``; its
    modules are dropped from ``sys.modules`` afterwards. Returns the distribution name.
    """
    directory = tmp_path / "site"
    directory.mkdir()
    monkeypatch.syspath_prepend(str(directory))
    added: list[str] = []

    def install(name: str | None = None, **kwargs: Any) -> str:
        dist = name or f"throwaway-{next(_unique)}"
        write_distribution(directory, dist, **kwargs)
        added.extend(kwargs.get("modules", {}))
        importlib.invalidate_caches()
        return dist

    yield install
    for module in added:
        sys.modules.pop(module, None)


@pytest.fixture
def unique() -> Callable[[str], str]:
    """``unique("mod")`` → a module name no other test uses (sys.modules is process-wide)."""
    return lambda stem: f"{stem}_{os.getpid()}_{next(_unique)}"
