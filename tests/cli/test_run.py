"""``agent-host run`` and ``chat`` as subprocesses: the scripted fallback and a real model server."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from agent_host_openai.testing import ENV_VARS, FakeServer, completion

from host.cli.chat import SCRIPTED_NOTICE

AGENT_HOST = str(Path(sys.executable).parent / "agent-host")


def run(
    *args: str, cwd: Path, stdin: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    environ = {
        k: v for k, v in os.environ.items() if not k.startswith("AGENT_HOST_") and k not in ENV_VARS
    }
    environ.update(env)
    return subprocess.run(
        [AGENT_HOST, "--data-dir", str(cwd / "data"), *args],
        capture_output=True,
        text=True,
        env=environ,
        cwd=cwd,
        input=stdin,
        timeout=120,
    )


@pytest.fixture
def server():
    made = FakeServer()
    made.start()
    yield made
    made.stop()


def test_run_without_a_model_uses_the_scripted_one_with_a_notice(tmp_path):
    result = run("run", "hello there", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "scripted reply: hello there\n")
    assert result.stderr == SCRIPTED_NOTICE + "\n"


def test_run_uses_the_configured_model_server(tmp_path, server):
    server.reply(completion("Hello from the server."))
    result = run("run", "hi", cwd=tmp_path, OPENAI_BASE_URL=server.url, AGENT_HOST_MODEL="m1")
    assert (result.returncode, result.stdout, result.stderr) == (0, "Hello from the server.\n", "")
    body = server.requests[0].body
    assert body["model"] == "m1"
    assert body["messages"][-1] == {"role": "user", "content": "hi"}


def test_an_unreachable_server_is_one_line_and_a_failure(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (tmp_path / "agent-host.toml").write_text("[plugins.openai]\nmax_retries = 0\n")
    url = f"http://127.0.0.1:{port}/v1"
    result = run("run", "hi", cwd=tmp_path, OPENAI_BASE_URL=url, AGENT_HOST_MODEL="m1")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == (
        f"agent-host: turn ended (error): model server http://127.0.0.1:{port}/v1 is unreachable: "
        "connection refused\n"
    )


def test_chat_answers_each_line_until_end_of_input(tmp_path):
    result = run("chat", cwd=tmp_path, stdin="first\n\nsecond\n")
    assert result.returncode == 0
    assert result.stdout == "you> scripted reply: first\nyou> you> scripted reply: second\nyou> "
