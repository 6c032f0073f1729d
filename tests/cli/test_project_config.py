"""A project's ``agent-host.toml`` that is no regular file of bounded size, through the real CLI
under a memory cap: one warning line naming it, and the project's settings skipped; the same
file given by the user (``--config``, the user-level file) is an error instead, since skipping
it could loosen the user's own settings."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from host.plugins.config import CONFIG_BYTES
from tests.cli.support import capped_agent_host

COMMANDS = [("plugins",), ("sessions", "list"), ("mcp", "trust", "time")]
SKIPPED = "agent-host: warning: config file agent-host.toml: {}; its settings are ignored"


def run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    home = project / "home"
    return capped_agent_host(*args, cwd=project, AGENT_HOST_HOME=str(home))


def warned(result: subprocess.CompletedProcess[str], why: str) -> None:
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines()[0] == SKIPPED.format(why)
    if result.args[3] == "mcp":
        assert result.returncode == 2  # the project defines no server now
        assert result.stderr.splitlines()[1:] == [
            'agent-host: error: no MCP server "time" is configured (known: none)'
        ]
    else:
        assert (result.returncode, result.stderr.count("\n")) == (0, 1), result.stderr


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_link_to_a_device_is_skipped_with_one_line(tmp_path: Path, command: tuple[str]) -> None:
    (tmp_path / "agent-host.toml").symlink_to("/dev/zero")
    why = "is a character device (a link to /dev/zero), not a regular file"
    warned(run(tmp_path, *command), why)


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_fifo_does_not_block(tmp_path: Path, command: tuple[str]) -> None:
    os.mkfifo(tmp_path / "agent-host.toml")  # nobody writes: a blocking open waits forever
    warned(run(tmp_path, *command), "is a FIFO, not a regular file")


def test_an_oversized_file_is_skipped_unread(tmp_path: Path) -> None:
    server = '[plugins.mcp.servers.time]\ncommand = "mcp-server-time"\n'
    (tmp_path / "agent-host.toml").write_text(server + "#" * CONFIG_BYTES)
    warned(run(tmp_path, "mcp", "trust", "time"), f"larger than {CONFIG_BYTES} bytes")


def test_a_link_to_a_regular_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "shared.toml").write_text('[plugins.mcp.servers.time]\ncommand = "true"\n')
    (tmp_path / "agent-host.toml").symlink_to(tmp_path / "shared.toml")
    result = run(tmp_path, "mcp", "trust", "time")
    assert (result.returncode, result.stderr) == (0, "")
    assert 'MCP server "time" (agent-host.toml) is trusted in' in result.stdout


def test_the_users_own_file_refused_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "mine.toml").symlink_to("/dev/zero")
    given = run(tmp_path, "--config", str(tmp_path / "mine.toml"), "plugins")
    why = f"larger than {CONFIG_BYTES} bytes"  # named by the user: read, but only so far
    assert (given.returncode, given.stderr) == (
        2,
        f"agent-host: error: cannot read config file {tmp_path / 'mine.toml'}: {why}\n",
    )
    (tmp_path / "home").mkdir()
    os.mkfifo(tmp_path / "home" / "agent-host.toml")
    user_level = run(tmp_path, "plugins")
    assert (user_level.returncode, user_level.stderr) == (
        2,
        f"agent-host: error: cannot read config file {tmp_path / 'home' / 'agent-host.toml'}: "
        "is a FIFO, not a regular file\n",
    )


def test_a_config_the_user_pipes_in_is_read(tmp_path: Path) -> None:
    """``--config <(…)``: a file the user names may be a pipe; only the project's may not."""
    pipe = tmp_path / "piped.toml"
    os.mkfifo(pipe)
    text = '[plugins.mcp.servers.time]\\ncommand = "true"\\n'
    with subprocess.Popen(["sh", "-c", f"printf '{text}' > '{pipe}'"]) as writer:
        result = run(tmp_path, "--config", str(pipe), "mcp", "trust", "time")
        if writer.poll() is None:  # nobody opened the pipe: the writer would wait for ever
            writer.kill()
    assert (result.returncode, result.stderr) == (0, "")
    assert 'MCP server "time" comes from your own configuration: trusted already' in result.stdout
