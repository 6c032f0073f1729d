"""A slash command that fails for a reason nobody foresaw is one line; the chat goes on."""

from __future__ import annotations

import logging

import pytest

from host.cli.slash import SlashCommands
from tests.subagents.test_service_support import (
    Env,
    env_fixture,  # noqa: F401
)


async def test_a_bug_in_a_command_is_one_line_and_logged(
    env: Env, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    root = await env.root()
    commands = SlashCommands(env.host, lambda: root)

    async def broken(self: SlashCommands) -> list[dict[str, object]]:
        raise RuntimeError("listing exploded")

    monkeypatch.setattr(SlashCommands, "tree_rows", broken)
    with caplog.at_level(logging.DEBUG, logger="host.cli.slash"):
        reply = await commands.run("/agents")
    assert reply.error and not reply.exit
    assert reply.lines == ("/agents failed: RuntimeError: listing exploded",)
    assert "RuntimeError: listing exploded" in caplog.text  # the traceback, for --debug
    assert (await commands.run("/help")).lines[0].startswith("/agents")  # still answering
