"""agent-host at both ends: host A's ``agent-host-mcp`` plugin configured with host B's
``agent-host mcp serve`` as a server. A scripted root on A delegates to a background agent on
B through ``B__subagent`` and reads its report through ``B__read_agent_messages``."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.support import AGENT_HOST, agent_host


def processes_with(text: str) -> list[int]:
    """The ids of live processes whose command line holds ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().split()[2]
        except OSError:
            continue
        if text in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def test_a_root_on_one_host_delegates_to_a_background_agent_on_another(serve) -> None:
    a, b = serve.path / "a", serve.path / "b"
    a.mkdir()
    b.mkdir()
    (b / "script.json").write_text(json.dumps({"research": [
        {"tool_calls": [{"name": "report", "arguments": {"output": "Found it on B."}}]},
        "Research done.",
    ]}))
    b_serve = ["--data-dir", str(b / "data"), "mcp", "serve", "--script", str(b / "script.json")]
    (a / "agent-host.toml").write_text(
        f"[plugins.mcp.servers.B]\ncommand = {json.dumps(AGENT_HOST)}\n"
        f"args = {json.dumps(b_serve)}\ncwd = {json.dumps(str(b))}\n"
        f"env = {{ AGENT_HOST_HOME = {json.dumps(str(b / 'home'))} }}\n"
    )
    (a / "script.json").write_text(json.dumps({"user": [
        {"tool_calls": [{"name": "B__subagent",
                         "arguments": {"description": "research", "prompt": "Look on B."}}]},
        {"tool_calls": [{"name": "B__read_agent_messages", "arguments": {"wait_seconds": 30}}]},
        "Done.",
    ]}))
    ran = agent_host(
        "--config", str(a / "agent-host.toml"), "run", "Delegate to B.",
        "--script", str(a / "script.json"), cwd=a, AGENT_HOST_HOME=str(a / "home"),
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip().endswith("Done.")
    [root_log] = (a / "data").glob("*.jsonl")
    events = [json.loads(line) for line in root_log.read_text().splitlines()[1:]]
    said = [event["content"] for event in events if event.get("role") == "tool"]
    [started, read] = said
    assert started.startswith("started subagent ")
    child_id = started.removeprefix("started subagent ")
    assert read.startswith(f"Background subagent {child_id} reported:\nFound it on B.")
    assert (b / "data" / f"{child_id}.jsonl").exists()  # the agent ran on B, and stays there
    assert processes_with(str(b / "data")) == []
