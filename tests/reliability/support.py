"""Shared helpers of the reliability suite (no tests here)."""

from __future__ import annotations

import os

SLOW = os.environ.get("AGENT_HOST_SLOW") == "1"
"""The slow profile; ``conftest.pytest_configure`` also honours ``--slow``."""


def scale(default: int, slow: int) -> int:
    """``default`` in the default run, ``slow`` in the slow profile."""
    return slow if SLOW else default
