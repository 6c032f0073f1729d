"""agent-host profiles [--json]: every profile with its source, and every diagnostic."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from host.cli.main import main
from tests.profiles.support import write

AGENT_HOST = str(Path(sys.executable).parent / "agent-host")


def setup_files(tmp_path: Path) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / "project"
    write(home / "agents", "rev.md", "reviewer", "User reviewer", tools="read_file, grep")
    write(
        project / ".agent-host" / "agents",
        "rev.md",
        "reviewer",
        "Project reviewer",
        tools="grep",
        disallowed_tools="shell",
        model="fast",
        max_steps="7",
        background="false",
        mcp_servers="[time, git]",
        memory="user",
    )
    (project / ".agent-host" / "agents" / "broken.md").write_text("no front matter")
    return home, project


def test_profiles_json(tmp_path):
    home, project = setup_files(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_HOST_")}
    env |= {"AGENT_HOST_HOME": str(home), "AGENT_HOST_PLUGINS": "subagent"}
    env["HOME"] = str(tmp_path / "real-home")  # no ~/.claude/agents of the machine's user
    result = subprocess.run(
        [AGENT_HOST, "profiles", "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    agents = project / ".agent-host" / "agents"
    assert [(r["kind"], r.get("name"), r["source"]) for r in rows] == [
        ("profile", "Explore", "built-in"),
        ("profile", "general-purpose", "built-in"),
        ("profile", "reviewer", "project"),
        ("diagnostic", None, "project"),
    ]
    assert rows[2] == {
        "kind": "profile",
        "name": "reviewer",
        "source": "project",
        "description": "Project reviewer",
        "tools": ["grep"],
        "disallowed_tools": ["shell"],
        "model": "fast",
        "max_steps": 7,
        "background": False,
        "mcp_servers": ["time", "git"],
        "memory": "user",
        "memory_dir": str(home / "agent-memory" / "reviewer"),
        "path": str(agents / "rev.md"),
        "plugin": None,
        "aliases": [],
        "overrides": [{"source": "user", "path": str(home / "agents" / "rev.md")}],
        "default": False,
    }
    assert [r["default"] for r in rows[:2]] == [False, True]  # general-purpose: used when subagent_type is omitted
    assert rows[3] == {
        "kind": "diagnostic",
        "source": "project",
        "path": str(agents / "broken.md"),
        "field": None,
        "problem": "no front matter: the file must start with a '---' line",
        "skipped": True,
        "message": f"{agents}/broken.md: no front matter: the file must start with a '---' line",
    }


def test_profiles_table(tmp_path, monkeypatch, capsys):
    home, project = setup_files(tmp_path)
    monkeypatch.setenv("AGENT_HOST_HOME", str(home))
    monkeypatch.setenv("AGENT_HOST_PLUGINS", "subagent")
    monkeypatch.setenv("HOME", str(tmp_path / "real-home"))
    monkeypatch.chdir(project)
    assert main(["--data-dir", str(tmp_path / "data"), "profiles"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["profile", "source", "model", "tools", "description"]
    assert lines[2].split()[:7] == [
        "Explore", "built-in", "default", "read_file,", "list_files,", "grep,", "mcp.fetch",
    ]  # fmt: skip
    assert lines[3].startswith("general-purpose  built-in  default  all")
    assert lines[4].split() == [
        "reviewer",
        "project",
        "fast",
        "grep",
        "except",
        "shell;",
        "MCP",
        "servers:",
        "time,",
        "git;",
        "memory:",
        "user",
        "Project",
        "reviewer",
    ]
    assert lines[5] == "default profile (no subagent_type): general-purpose"
    assert lines[6] == (
        f"warning: {project}/.agent-host/agents/broken.md: no front matter: the file must start "
        "with a '---' line"
    )


def test_profiles_table_without_a_default():
    from host.cli.profiles import rows, table
    from host.profiles.model import ProfileSet

    assert table(rows(ProfileSet())).splitlines()[-1] == (
        "default profile (no subagent_type): none, a plain subagent with the parent's tools"
    )


def test_claude_code_files_are_listed_with_their_source_and_notes(tmp_path, monkeypatch, capsys):
    claude = tmp_path / "real-home" / ".claude" / "agents"
    claude.mkdir(parents=True)
    (claude / "r.md").write_text(
        "---\nname: code-reviewer\ndescription: Reviews code\ntools: Read, Task\n"
        "model: sonnet\ncolor: purple\n---\nYou review.\n"
    )
    monkeypatch.setenv("AGENT_HOST_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AGENT_HOST_PLUGINS", "subagent")
    monkeypatch.setenv("HOME", str(tmp_path / "real-home"))
    monkeypatch.chdir(tmp_path)
    assert main(["--data-dir", str(tmp_path / "data"), "profiles"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].split() == [
        "code-reviewer",
        "claude-user",
        "default",
        "subagent",
        "Reviews",
        "code",
    ]
    assert lines[-1] == (  # a note: the profile loaded anyway
        f'note: {claude}/r.md: tools: profile "code-reviewer": no host tool for Read; its '
        "children go without"
    )
