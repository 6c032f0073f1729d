"""Every tool result is sized for a model: cut at ``[tools] max_result_chars`` with its note
(what the model and the log get alike), whole with ``0``, and a bad setting one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from host import hookimpl
from host.agents import call, say
from host.app import Host
from host.errors import ConfigError
from host.testing import MakeHost
from host.tools import ToolResult, tool

TOTAL = 5_899_999


@tool
def big() -> ToolResult:
    """A long text, with a structured part as long."""
    return ToolResult("y" * TOTAL, structured={"text": "y" * TOTAL})


class Big:
    """A plugin with the one local tool."""

    name = "big"

    @staticmethod
    @hookimpl
    def register_tools(register: Any) -> None:
        register(big)


async def model_and_log(host: Host) -> tuple[Any, Any]:
    """One turn calling ``big``: the tool message the model saw, and the one logged."""
    model = host.services.models.resolve("scripted")
    model.script("user", call("big"), say("ok"))
    agent = await host.services.agents.create(label="user")
    agent.followup("go")
    await agent.wait_idle()
    [seen] = [m for m in model.requests[-1].messages if m.role == "tool"]
    [logged] = [e.body for e in agent.session.events if getattr(e.body, "role", "") == "tool"]
    return seen, logged


async def test_a_local_tools_huge_result_is_cut_with_its_note(make_host: MakeHost) -> None:
    seen, logged = await model_and_log(make_host(Big))
    note = "[result cut: 5,899,999 characters in all, the first 100,000 shown]"
    assert seen.content == "y" * 100_000 + "\n" + note
    assert (logged.content, logged.structured) == (seen.content, None)


async def test_a_limit_of_zero_keeps_the_result_whole(make_host: MakeHost) -> None:
    _, logged = await model_and_log(make_host(Big, config={"tools": {"max_result_chars": 0}}))
    assert len(logged.content) == TOTAL
    assert logged.structured == {"text": "y" * TOTAL}


async def test_a_smaller_limit_cuts_there(make_host: MakeHost) -> None:
    seen, _ = await model_and_log(make_host(Big, config={"tools": {"max_result_chars": 10}}))
    assert seen.content == "yyyyyyyyyy\n[result cut: 5,899,999 characters in all, the first 10 shown]"


@pytest.mark.parametrize(
    ("table", "line"),
    [
        (
            {"max_result_chars": -1},
            "[tools] max_result_chars must be a whole number of characters (0: no limit), not -1",
        ),
        (
            {"max_result_chars": "big"},
            "[tools] max_result_chars must be a whole number of characters (0: no limit), "
            "not 'big'",
        ),
        ({"max_chars": 5}, '[tools]: unknown key "max_chars" (known: max_result_chars)'),
    ],
)
def test_a_bad_setting_is_one_line(table: dict[str, Any], line: str) -> None:
    with pytest.raises(ConfigError) as raised:
        Host(config={"tools": table})
    assert raised.value.message == line


def test_the_cli_says_a_bad_setting_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "agent-host.toml").write_text("[tools]\nmax_result_chars = -5\n")
    done = subprocess.run(
        [str(Path(sys.executable).parent / "agent-host"), "--data-dir", "d", "tools"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr == (
        "agent-host: error: [tools] max_result_chars must be a whole number of characters "
        "(0: no limit), not -5\n"
    )
