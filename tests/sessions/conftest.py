"""Shared fixtures for the sessions tests: a data directory inside a sandbox and helpers."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures import persistence  # noqa: F401 - JSONL persistence over data_dir


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    """A directory whose only child is ``data`` (so writes outside data_dir are visible)."""
    root = tmp_path / "sandbox"
    root.mkdir()
    return root


@pytest.fixture
def data_dir(sandbox: Path) -> Path:
    """The data directory, not yet created (overrides ``tests.fixtures.data_dir``)."""
    return sandbox / "data"
