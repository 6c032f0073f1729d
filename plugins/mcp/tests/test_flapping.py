"""A streamable-HTTP server that goes up and down every second (the tests' ``fault_server.py``
on one port): its row follows, each cause is logged once, without a traceback, and a stdio
server next to it answers throughout."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

import agent_host_mcp
import pytest

from host.agents import call, say
from tests.support import plugin_row, soon

PLUGIN = ("mcp", agent_host_mcp)
FAULT = str(Path(__file__).with_name("fault_server.py"))
TIME = {"command": str(Path(sys.executable).parent / "mcp-server-time")}


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    """Trust decisions go to a throwaway home."""
    monkeypatch.setenv("AGENT_HOST_HOME", str(tmp_path / "home"))


def state(host, name: str) -> str:
    return str(plugin_row(host, name)["state"])


async def test_a_flapping_http_server_logs_each_cause_once_and_others_go_on(
    make_host, caplog, port, listening, tool_messages
):
    async def answer(tool: str, **arguments) -> str:
        _, [result] = await tool_messages(host, call(tool, **arguments), say("ok"))
        return str(result.content)

    command = [sys.executable, FAULT, "--http", str(port)]
    server = listening(command, port)
    url = f"http://127.0.0.1:{port}/mcp"
    config = {"plugins": {"mcp": {"servers": {"web": {"url": url}, "time": TIME}}}}
    host = make_host(PLUGIN, config=config)
    assert await answer("web__echo", text="first") == "first"
    caplog.set_level(logging.INFO)
    lines = []
    for _ in range(3):
        server.kill()
        server.wait()
        assert await soon(lambda: state(host, "mcp.web") == "failed", timeout=40)
        lines.append(plugin_row(host, "mcp.web")["error"])
        assert '"timezone": "UTC"' in await answer("time__get_current_time", timezone="UTC")
        server = listening(command, port)
        await asyncio.sleep(1.0)
    assert await soon(lambda: state(host, "mcp.web") == "active", timeout=40)
    assert await answer("web__echo", text="last") == "last"
    # Noticed where the server died — under the open event stream — not at a later request.
    assert "peer closed connection" in lines[0], lines
    sdk = [r for r in caplog.records if r.name.startswith("mcp.")]
    causes = [r.getMessage().split(":", 1)[0] for r in sdk]
    assert len(causes) == len(set(causes)), causes  # one line per cause
    assert not any(r.exc_info for r in sdk)
    assert "Traceback" not in caplog.text
