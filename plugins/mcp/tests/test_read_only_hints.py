"""Which MCP calls of one step run together: those annotated ``readOnlyHint``, unless they
are also annotated ``destructiveHint`` (the fault server's ``nap`` and ``doze`` log their
start and end)."""

from __future__ import annotations

import sys
from pathlib import Path

import agent_host_mcp
import pytest

from host.agents import calls, say, tool_call

PLUGIN = ("mcp", agent_host_mcp)
FAULT = str(Path(__file__).with_name("fault_server.py"))


@pytest.mark.parametrize(
    ("tool", "order"),
    [
        ("nap", ["started", "started", "ended", "ended"]),
        ("doze", ["started", "ended", "started", "ended"]),
    ],
)
async def test_read_only_calls_run_together_unless_also_destructive(
    make_host, tool_messages, tmp_path, monkeypatch, tool, order
) -> None:
    monkeypatch.setenv("AGENT_HOST_HOME", str(tmp_path / "home"))
    log = tmp_path / "calls.log"
    server = {"command": sys.executable, "args": [FAULT, "--cancel-log", str(log)]}
    host = make_host(PLUGIN, config={"plugins": {"mcp": {"servers": {"fault": server}}}})
    naps = [tool_call(f"fault__{tool}", seconds=1) for _ in range(2)]
    _agent, results = await tool_messages(host, calls(*naps), say("ok"))
    assert [result.content for result in results] == ["rested", "rested"]
    assert log.read_text().split() == order
