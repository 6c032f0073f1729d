"""Watching ``JsonlPersistence.list()``: which log files it opens (its header cache's misses)."""

from __future__ import annotations

import time

from host.sessions.jsonl import JsonlPersistence
from host.sessions.model import SessionHeader


def settle() -> None:
    """Let the timestamps age past the cache's slack (what a later listing would see)."""
    time.sleep(0.25)


def counted(persistence: JsonlPersistence) -> list[str]:
    """Record the files ``persistence.list()`` opens (its cache misses) in the returned list."""
    reads: list[str] = []
    read_header = persistence._read_header

    def counting(name: str) -> tuple[SessionHeader, bytes] | None:
        reads.append(name)
        return read_header(name)

    persistence._read_header = counting  # type: ignore[method-assign]
    return reads


async def listed(persistence: JsonlPersistence, reads: list[str]) -> tuple[list[str], list[str]]:
    """The ids ``list()`` returns, and the files it read to answer (cleared for the next)."""
    ids = [h.id for h in await persistence.list()]
    opened = sorted(reads)
    reads.clear()
    return ids, opened
