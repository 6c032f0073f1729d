"""A slash command that fails for a reason nobody foresaw is one line; the chat goes on."""

from __future__ import annotations

import logging

import pytest

from host.cli.slash import SlashCommands
from tests.subagents.harness import Env


async def broken_commands(env: Env, monkeypatch: pytest.MonkeyPatch) -> SlashCommands:
    """The commands of a new root, with listing the tree broken by a bug."""
    root = await env.root()

    async def broken(self: SlashCommands) -> list[dict[str, object]]:
        raise RuntimeError("listing exploded")

    monkeypatch.setattr(SlashCommands, "tree_rows", broken)
    return SlashCommands(env.host, lambda: root)


async def test_a_bug_in_a_command_is_one_line_and_logged(
    env: Env, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    commands = await broken_commands(env, monkeypatch)
    with caplog.at_level(logging.DEBUG, logger="host.cli.slash"):
        reply = await commands.run("/agents")
    assert reply.error and not reply.exit
    assert reply.lines == ("/agents failed: RuntimeError: listing exploded",)
    (record,) = [r for r in caplog.records if r.name == "host.cli.slash"]
    assert record.exc_info is not None  # the traceback, for --debug, which adds no handler:
    assert record.levelno >= logging.lastResort.level  # a record reaches stderr from WARNING
    assert (await commands.run("/help")).lines[0].startswith("/agents")  # still answering


async def test_without_debug_nothing_reaches_the_terminal_but_the_line(
    env: Env, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    commands = await broken_commands(env, monkeypatch)
    with caplog.at_level(logging.WARNING):
        reply = await commands.run("/agents")
    assert reply.error
    assert [r for r in caplog.records if r.name == "host.cli.slash"] == []
