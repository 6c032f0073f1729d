"""``agent-host dev`` restarts when the MCP configuration changes, and the new server runs."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from tests.lines import Lines, wait_for

TIMEOUT = 60.0
TIME = Path(sys.executable).parent / "mcp-server-time"


def definition(command: Path, zone: str) -> str:
    return (
        f'[plugins.mcp.servers.time]\ncommand = "{command}"\n'
        f'args = ["--local-timezone", "{zone}"]\n'
    )


def test_editing_the_server_definition_restarts_dev_with_it(tmp_path: Path) -> None:
    server = tmp_path / "time-server-of-this-test"  # a name no other process runs
    server.symlink_to(TIME)
    config = tmp_path / "user.toml"
    config.write_text(definition(server, "UTC"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_HOST_", "OPENAI_"))}
    env["AGENT_HOST_HOME"] = str(tmp_path / "home")
    command = [sys.executable, "-m", "host.cli.main", "--config", str(config), "dev"]
    command += ["--data-dir", str(tmp_path / "d")]
    dev = Lines(command, cwd=tmp_path, env=env)
    try:
        assert wait_for(dev.err, "agent-host: watching", TIMEOUT) is not None
        line = None
        deadline = time.monotonic() + TIMEOUT
        zones = iter(["Europe/Paris", "Asia/Tokyo", "America/Lima"] * 20)
        while line is None and time.monotonic() < deadline:
            # the watcher may start a moment after the "watching" line: save until it sees one
            config.write_text(definition(server, next(zones)))
            line = wait_for(dev.out, "restarting: ", 2.0)
        assert line == "restarting: configuration changed (user.toml)"
        assert wait_for(dev.err, "agent-host: watching", TIMEOUT) is not None  # the new process
        dev.send("/exit\n")
        assert dev.process.wait(timeout=TIMEOUT) == 0
    finally:
        dev.kill()
    leftover = subprocess.run(["pgrep", "-f", str(server)], capture_output=True, text=True)
    assert leftover.stdout.strip() == ""  # every server the two processes started is gone
