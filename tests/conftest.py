"""Shared fixtures: throwaway distributions on the path and the seed of random trials (the slow
profile's option is the repository's: ``conftest.py`` at its root)."""

from __future__ import annotations

import importlib
import itertools
import os
import random
import sys
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from host.testing import MakeHarness
from tests.distributions import write_distribution
from tests.subagents.harness import Env, make_env

_unique = itertools.count()


@pytest.fixture
def crash_seed(request: pytest.FixtureRequest) -> int:
    """The seed of a test's random trials: ``CRASH_SEED`` when set, else a fresh one.

    It is printed at set-up (pytest shows it with a failure) and added to a failed test's
    report, so ``CRASH_SEED=<seed>`` replays the same plan of kill moments.
    """
    raw = os.environ.get("CRASH_SEED", "").strip()
    seed = int(raw) if raw else random.SystemRandom().randrange(1 << 32)
    request.node.stash[_SEED] = seed
    print(f"CRASH_SEED={seed}")
    return seed


_SEED = pytest.StashKey[int]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    seed = item.stash.get(_SEED, None)
    if seed is not None and report.failed:
        report.sections.append(("random trials", f"reproduce with CRASH_SEED={seed}"))
    return report


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
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytest's ``pytester``, whose inner pytest runs as in a plugin author's shell: without
    the variables a pytest-xdist worker of this suite has (``PYTEST_XDIST_WORKER``, …)."""
    for name in [n for n in os.environ if n.startswith("PYTEST_XDIST_")]:
        monkeypatch.delenv(name)
    return pytester


@pytest.fixture
def unique() -> Callable[[str], str]:
    """``unique("mod")`` → a module name no other test uses (sys.modules is process-wide)."""
    return lambda stem: f"{stem}_{os.getpid()}_{next(_unique)}"


@pytest.fixture
def env(tmp_path: Path, make_harness: MakeHarness) -> Env:
    """A whole host for the subagent tests (``tests.subagents.harness.Env``) over
    ``tmp_path / "data"``, closed (and unstuck) after the test."""
    return make_env(tmp_path, make_harness)
