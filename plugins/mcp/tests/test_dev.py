"""``agent-host dev`` restarts when the MCP configuration changes, and the new server runs."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

TIMEOUT = 60.0
TIME = Path(sys.executable).parent / "mcp-server-time"


def reader(stream, lines: queue.Queue[str]) -> None:
    for line in iter(stream.readline, ""):
        lines.put(line)


def wait_for(lines: queue.Queue[str], needle: str, seconds: float) -> str | None:
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            return None
        if needle in line:
            return line.strip()
    return None


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
    process = subprocess.Popen(
        command,
        cwd=tmp_path,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out: queue.Queue[str] = queue.Queue()
    err: queue.Queue[str] = queue.Queue()
    threading.Thread(target=reader, args=(process.stdout, out), daemon=True).start()
    threading.Thread(target=reader, args=(process.stderr, err), daemon=True).start()
    try:
        assert wait_for(err, "agent-host: watching", TIMEOUT) is not None
        line = None
        deadline = time.monotonic() + TIMEOUT
        zones = iter(["Europe/Paris", "Asia/Tokyo", "America/Lima"] * 20)
        while line is None and time.monotonic() < deadline:
            # the watcher may start a moment after the "watching" line: save until it sees one
            config.write_text(definition(server, next(zones)))
            line = wait_for(out, "restarting: ", 2.0)
        assert line == "restarting: configuration changed (user.toml)"
        assert wait_for(err, "agent-host: watching", TIMEOUT) is not None  # the new process
        assert process.stdin is not None
        process.stdin.write("/exit\n")
        process.stdin.flush()
        assert process.wait(timeout=TIMEOUT) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    leftover = subprocess.run(["pgrep", "-f", str(server)], capture_output=True, text=True)
    assert leftover.stdout.strip() == ""  # every server the two processes started is gone
