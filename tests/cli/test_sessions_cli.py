"""``agent-host sessions``: real logs written by a real host, read by the CLI in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from host.agents.scripted import call, say
from host.sessions.model import SessionHeader
from host.testing import build_host

AGENT_HOST = str(Path(sys.executable).parent / "agent-host")


def cli(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_HOST_")}
    env["NO_COLOR"] = "1"
    return subprocess.run(
        [AGENT_HOST, "--data-dir", str(data_dir), "sessions", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        cwd=data_dir.parent,
    )


async def write_sessions(data_dir: Path) -> None:
    host = build_host(data_dir=data_dir)
    try:
        scripted = host.services.models.resolve("scripted")
        scripted.script("writer", call("word_count", text="a b c"), say("three words"))
        agents = host.services.agents
        root = await agents.create(SessionHeader(id="root", created_at=1), label="writer")
        root.followup("count please")
        await root.wait_idle()
        host.services.sessions.fork("root", new_id="side")
    finally:
        await host.aclose()


async def test_list_show_and_tree(tmp_path):
    data_dir = tmp_path / "data"
    await write_sessions(data_dir)

    listed = json.loads(cli(data_dir, "list", "--json").stdout)
    assert [row["id"] for row in listed] == ["root", "side"]
    assert listed[1]["parent_session"] == "root"
    assert listed[1]["seed_length"] > 0

    shown = cli(data_dir, "show", "root")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0].startswith("session root (")
    assert "user: count please" in lines
    assert "assistant: three words" in lines
    assert "  [turn ended: completed]" in lines

    assert cli(data_dir, "tree").stdout.splitlines() == ["root", "  side"]


def test_bad_ids_and_missing_sessions_are_one_line_errors(tmp_path):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    hostile = cli(data_dir, "show", "../etc/passwd")
    assert hostile.returncode == 2
    assert hostile.stderr.startswith("agent-host: error: invalid session id '../etc/passwd'")
    missing = cli(data_dir, "show", "nope")
    assert (missing.returncode, missing.stderr) == (
        2,
        "agent-host: error: session 'nope' is not stored\n",
    )
    assert cli(data_dir, "list").stdout.strip() == "(no sessions)"
    assert list(data_dir.iterdir()) == []
