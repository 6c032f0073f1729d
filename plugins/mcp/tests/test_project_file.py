"""A project's ``.mcp.json`` that is no regular file of bounded size, through the real CLI in a
subprocess under a memory cap: one warning line naming it, no traceback, no endless read, and
the user's own servers still start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from agent_host_mcp.config import MCP_JSON_BYTES

from tests.cli.support import capped_agent_host

BIN = Path(sys.executable).parent
TIME = {"command": str(BIN / "mcp-server-time")}
COMMANDS = [("plugins",), ("mcp", "trust", "time")]
def agent_host(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real CLI in ``project`` under the memory cap, with a throwaway home beside it."""
    return capped_agent_host(*args, cwd=project, AGENT_HOST_HOME=str(project.parent / "home"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    place = tmp_path / "cloned"
    place.mkdir()
    return place


def refused_line(result: subprocess.CompletedProcess[str], project: Path) -> str:
    """The one line of stderr naming the project's .mcp.json (no traceback)."""
    assert "Traceback" not in result.stderr
    [line] = [each for each in result.stderr.splitlines() if ".mcp.json" in each]
    line = line.removeprefix("agent-host: warning: ")  # ``mcp`` says it; the plugin logs it
    assert line.startswith(f"{project / '.mcp.json'}: ")
    assert line.endswith("; no MCP server from it loads")
    return line


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_link_to_a_device_is_one_warning_line(
    project: Path, device: str, command: tuple[str, ...]
) -> None:
    (project / ".mcp.json").symlink_to(device)
    result = agent_host(project, *command)
    line = refused_line(result, project)
    assert f"is a character device (a link to {device}), not a regular file" in line
    if command[0] == "mcp":
        assert result.returncode == 2
        assert result.stderr.splitlines()[-1] == (
            'agent-host: error: no MCP server "time" is configured (known: none)'
        )
    else:
        assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_fifo_does_not_block(project: Path, command: tuple[str, ...]) -> None:
    os.mkfifo(project / ".mcp.json")  # nobody writes: a blocking open would wait forever
    line = refused_line(agent_host(project, *command), project)
    assert "is a FIFO, not a regular file" in line


@pytest.mark.parametrize("target", ["fifo", "/dev/zero"])
def test_a_command_that_calls_no_tool_does_not_read_it(project: Path, target: str) -> None:
    if target == "fifo":
        os.mkfifo(project / ".mcp.json")
    else:
        (project / ".mcp.json").symlink_to(target)
    result = agent_host(project, "sessions", "list")
    assert result.returncode == 0, result.stderr
    assert ".mcp.json" not in result.stderr


def test_an_oversized_file_is_refused_unread(project: Path) -> None:
    text = json.dumps({"mcpServers": {"time": TIME}})
    (project / ".mcp.json").write_text(text + " " * MCP_JSON_BYTES)
    line = refused_line(agent_host(project, "mcp", "trust", "time"), project)
    assert f"larger than {MCP_JSON_BYTES} bytes" in line


def test_a_link_to_a_regular_file_still_defines_servers(project: Path) -> None:
    elsewhere = project.parent / "shared.json"
    elsewhere.write_text(json.dumps({"mcpServers": {"time": TIME}}))
    (project / ".mcp.json").symlink_to(elsewhere)
    rows = {row["name"]: row for row in json.loads(agent_host(project, "plugins", "--json").stdout)}
    assert rows["mcp.time"]["state"] == "blocked"  # defined, and waiting for trust
    trusted = agent_host(project, "mcp", "trust", "time")
    assert trusted.returncode == 0 and "is trusted in" in trusted.stdout
    rows = {row["name"]: row for row in json.loads(agent_host(project, "plugins", "--json").stdout)}
    assert rows["mcp.time"]["state"] == "active"


def test_the_users_own_servers_start_when_the_project_file_is_refused(project: Path) -> None:
    (project / ".mcp.json").symlink_to("/dev/zero")
    config = project.parent / "mine.toml"
    config.write_text(f'[plugins.mcp.servers.time]\ncommand = "{TIME["command"]}"\n')
    result = agent_host(project, "--config", str(config), "plugins", "--json")
    refused_line(result, project)
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert rows["mcp.time"]["state"] == "active"
