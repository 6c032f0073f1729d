"""The protocol's reference ``server-everything`` (installed from npm by
``plugins/mcp/tests/npm/install.sh``, pinned by its lockfile) in a host, over stdio and
streamable HTTP: a killed server stays named, an HTTP server that restarts comes back,
read-only calls of one step run together, progress reaches stream listeners.

Without the installed server these tests are skipped on a developer machine and fail under
``CI=true``, as the PostgreSQL tests do."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import agent_host_mcp
import pytest

from host.agents import call, calls, say, tool_call
from host.tools import ToolProgress
from tests.support import plugin_row, soon

PLUGIN = ("mcp", agent_host_mcp)
NPM_DIR_ENV = "AGENT_HOST_TEST_NPM_DIR"
INSTALL = Path(__file__).parent / "npm" / "install.sh"


def everything_command() -> str:
    """The installed ``mcp-server-everything``; skips (fails under CI) when it is missing."""
    root = Path(os.environ.get(NPM_DIR_ENV) or Path.home() / ".cache/agent-host/test-npm")
    path = root / "node_modules" / ".bin" / "mcp-server-everything"
    if path.exists():
        return str(path)
    reason = f"{path} is missing: run {INSTALL}"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but {reason}")
    pytest.skip(reason)


@pytest.fixture
def everything() -> dict[str, object]:
    """The stdio definition of server-everything."""
    return {"command": everything_command(), "args": ["stdio"]}


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    """Trust decisions go to a throwaway home."""
    monkeypatch.setenv("AGENT_HOST_HOME", str(tmp_path / "home"))


def servers(**definitions):
    return {"plugins": {"mcp": {"servers": definitions}}}


async def test_a_killed_stdio_server_stays_named_in_every_later_call(
    make_host, everything, tool_messages
):
    host = make_host(PLUGIN, config=servers(everything=everything))
    connection = host.plugins.records["mcp.everything"].obj.connection
    os.kill(connection.pid, signal.SIGKILL)
    assert await soon(lambda: plugin_row(host, "mcp.everything")["state"] == "failed", timeout=20)
    line = plugin_row(host, "mcp.everything")["error"]
    assert line.startswith('MCP server "everything" exited (signal 9)')

    echo = call("everything__echo", message="hi")
    _, results = await tool_messages(host, echo, echo, say("ok"))

    assert [(r.content, r.is_error) for r in results] == [(line, True), (line, True)]
    assert plugin_row(host, "mcp.everything")["state"] == "failed"


async def test_a_restarted_http_server_goes_failed_then_active_with_its_tools(
    make_host, port, listening, tool_messages
):
    command = [everything_command(), "streamableHttp"]
    env = {**os.environ, "PORT": str(port)}
    server = listening(command, port, env)
    url = f"http://127.0.0.1:{port}/mcp"
    host = make_host(PLUGIN, config=servers(web={"url": url}))
    await tool_messages(host, call("web__echo", message="up"), say("ok"))  # the host loop known
    tools = plugin_row(host, "mcp.web")["tools"]
    assert "web__echo" in tools

    server.terminate()
    assert await soon(lambda: plugin_row(host, "mcp.web")["state"] == "failed", timeout=20)
    line = plugin_row(host, "mcp.web")["error"]
    assert line.startswith(f'MCP server "web" ({url}) is unreachable: ')
    started = time.monotonic()
    _, [down] = await tool_messages(host, call("web__echo", message="down"), say("ok"))
    assert (down.content, down.is_error) == (line, True)
    assert time.monotonic() - started < 10  # at once, not after a timeout (30 s and more)

    server.wait()
    listening(command, port, env)
    assert await soon(lambda: plugin_row(host, "mcp.web")["state"] == "active", timeout=40)
    assert plugin_row(host, "mcp.web")["tools"] == tools
    _, [back] = await tool_messages(host, call("web__echo", message="back"), say("ok"))
    assert (back.content, back.is_error) == ("Echo: back", False)


async def test_read_only_calls_of_one_step_run_together_in_call_order(
    make_host, everything, tool_messages
):
    host = make_host(PLUGIN, config=servers(everything=everything))
    slow = [
        tool_call("everything__trigger-long-running-operation", duration=2, steps=4)
        for _ in range(4)
    ]
    echo = tool_call("everything__echo", message="last")
    progressed: list[str] = []  # the call of each progress report (one every 0.5 s, per call)

    def heard(event: object) -> None:
        if isinstance(event, ToolProgress):
            progressed.append(event.tool_call_id)

    agent, results = await tool_messages(host, calls(*slow, echo), say("ok"), stream=heard)

    # Together: the last call reported progress before the first one's last report (one after
    # another, every report of a call would come before the next call's first).
    first, last = results[0].tool_call_id, results[3].tool_call_id
    last_of_first = max(i for i, called in enumerate(progressed) if called == first)
    assert progressed.index(last) < last_of_first, progressed
    assert [r.content.startswith("Long running operation completed") for r in results] == [
        True,
        True,
        True,
        True,
        False,
    ]
    assert results[-1].content == "Echo: last"
    asked = [c.id for e in agent.session.events for c in getattr(e.body, "tool_calls", ())]
    assert [r.tool_call_id for r in results] == asked


def test_the_task_only_tool_is_not_run_as_a_plain_call(make_host, everything):
    host = make_host(PLUGIN, config=servers(everything=everything))
    assert "everything__simulate-research-query" not in plugin_row(host, "mcp.everything")["tools"]


def test_a_command_that_calls_no_tool_starts_no_server(tmp_path):
    slow = tmp_path / "slow_server.py"
    ran = tmp_path / "ran"  # the server writes it as it starts, then fails to
    slow.write_text(f"open({str(ran)!r}, 'w').close()\n")
    (tmp_path / "agent-host.toml").write_text(
        f'[plugins.mcp.servers.slow]\ncommand = "{sys.executable}"\nargs = ["{slow}"]\n'
    )
    command = [str(Path(sys.executable).parent / "agent-host"), "--config", "agent-host.toml"]
    done = subprocess.run(
        [*command, "sessions", "list"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert not ran.exists()  # the server never ran
    listed = subprocess.run(
        [*command, "plugins"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert "mcp.slow" in listed.stdout  # plugins still starts it, to show its state
    assert ran.exists()
