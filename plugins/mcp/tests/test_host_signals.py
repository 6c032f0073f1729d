"""A real ``agent-host`` stopped by a signal while a real MCP server works on a call: SIGTERM
(``kill``, ``docker stop``, systemd) closes ``run``, plain ``chat`` and plain ``dev`` as Ctrl-C
does, exit 143; after SIGKILL the server does not outlive the host either."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

import pytest

from tests.cli.support import AGENT_HOST, agent_host
from tests.support import alive, wait_until

FAULT = Path(__file__).with_name("fault_server.py")
TIMEOUT = 60.0
COMMANDS = {
    "run": ["run", "--script", "script.json", "go"],
    "chat": ["chat", "--plain", "--script", "script.json"],
    "dev": ["dev", "--plain", "--script", "script.json"],
}


class Host:
    """``agent-host COMMAND`` whose scripted model calls the fault server's ``tool`` for an
    hour, started and waited for until the server has begun the call."""

    def __init__(self, tmp_path: Path, command: str, tool: str = "slow") -> None:
        self.tmp_path = tmp_path
        self.log = tmp_path / "slow.log"
        pid_file = tmp_path / "server.pid"
        server_args = [str(FAULT), "--cancel-log", str(self.log), "--pid-file", str(pid_file)]
        (tmp_path / "user.toml").write_text(
            f"[plugins.mcp.servers.fault]\ncommand = {json.dumps(sys.executable)}\n"
            f"args = {json.dumps(server_args)}\n"
        )
        call = {"name": f"fault__{tool}", "arguments": {"seconds": 3600}}
        script = {"user": [{"text": "Waiting on the server.", "tool_calls": [call]}]}
        (tmp_path / "script.json").write_text(json.dumps(script))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_HOST_", "OPENAI_"))}
        env.update(AGENT_HOST_HOME=str(tmp_path / "home"), NO_COLOR="1")
        argv = [AGENT_HOST, "--config", "user.toml", "--data-dir", str(tmp_path / "data")]
        self.process = subprocess.Popen(
            [*argv, *COMMANDS[command]], cwd=tmp_path, env=env, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        if command != "run":
            assert self.process.stdin is not None
            self.process.stdin.write("go\n")  # and the input stays open: no end of input
            self.process.stdin.flush()
        wait_until(self._call_started, "the server to start the call", TIMEOUT)
        self.server = int(pid_file.read_text())

    def _call_started(self) -> bool:
        assert self.process.poll() is None, self.process.communicate()
        return self.log.exists() and "started" in self.log.read_text()

    def session_log(self) -> str:
        (root,) = [row["id"] for row in json.loads(
            agent_host("sessions", "list", "--json", cwd=self.tmp_path).stdout
        )]
        return agent_host("sessions", "show", root, cwd=self.tmp_path).stdout

    def end(self) -> None:
        """Kill whatever still runs (a test's cleanup)."""
        self.process.kill()
        self.process.communicate()
        with suppress(OSError, ValueError, AttributeError):
            os.kill(self.server, signal.SIGKILL)


@pytest.fixture
def start(tmp_path: Path) -> Iterator[object]:
    hosts: list[Host] = []

    def started(command: str, tool: str = "slow") -> Host:
        hosts.append(Host(tmp_path, command, tool))
        return hosts[-1]

    yield started
    for host in hosts:
        host.end()


@pytest.mark.parametrize("command", ["run", "chat", "dev"])
def test_sigterm_mid_call_closes_like_ctrl_c_and_exits_143(start, command):
    host = start(command)
    host.process.send_signal(signal.SIGTERM)
    out, err = host.process.communicate(timeout=TIMEOUT)
    assert host.process.returncode == 143, err
    assert "Waiting on the server.\n" in out
    assert err.endswith("agent-host: turn ended (interrupted)\nagent-host: terminated\n"), err
    assert "Traceback" not in err
    assert not alive(host.server)  # asked to stop, and stopped before the host exited
    assert host.log.read_text().split() == ["started", "cancelled"]  # the call was cancelled
    log = host.session_log()
    assert log.rstrip().endswith(
        "  ✗ tool call was interrupted before it finished\n  [turn ended: interrupted]"
    )


def test_a_server_does_not_outlive_a_host_killed_mid_call(start):
    host = start("run", "busy")  # a call that even the end of its input does not stop
    assert alive(host.server)
    host.process.kill()  # SIGKILL: the host closes nothing
    host.process.wait(timeout=TIMEOUT)
    wait_until(lambda: not alive(host.server), "the server to end with its host", TIMEOUT)


def test_a_second_sigterm_while_the_host_closes_lets_the_close_finish(start):
    host = start("run", "busy")  # the server takes a grace period to stop: the close lasts
    host.process.send_signal(signal.SIGTERM)
    assert host.process.stderr is not None
    while "agent-host: turn ended (interrupted)" not in (line := host.process.stderr.readline()):
        assert line, "the host ended before its turn did"
    host.process.send_signal(signal.SIGTERM)  # the host is closing, its server still runs
    _out, err = host.process.communicate(timeout=TIMEOUT)
    assert (host.process.returncode, err) == (143, "agent-host: terminated\n")
    assert not alive(host.server)
    assert host.session_log().rstrip().endswith("[turn ended: interrupted]")
