"""``agent-host dev``'s file watcher (real ``watchfiles``): in place once started."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from host.cli.dev import watch_changes

TIMEOUT = 30.0


async def test_saves_made_right_after_the_start_are_seen(tmp_path: Path) -> None:
    code, config = tmp_path / "code", tmp_path / "agent-host.toml"
    code.mkdir()
    async with watch_changes([code], files=[config]) as changes:
        (code / "plugin.py").write_text("x = 1\n")
        config.write_text("[plugins]\n")
        seen: set[str] = set()
        while len(seen) < 2:
            seen |= await asyncio.wait_for(anext(changes), TIMEOUT)
    assert seen == {str(code / "plugin.py"), str(config)}


async def test_a_path_that_cannot_be_watched_fails_the_start(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    with pytest.raises(FileNotFoundError, match=f"^cannot watch {re.escape(str(missing))}: "):
        async with watch_changes([missing]):
            pytest.fail("started without watching")
