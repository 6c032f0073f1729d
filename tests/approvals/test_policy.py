"""The ``[approvals]`` policy: rules, the no-widening merge, bad tables, and the CLI reading it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from host.approvals.policy import Policy, effective, parse
from host.errors import ConfigError


def test_deny_then_ask_then_allow_then_the_mode() -> None:
    policy = Policy("ask", allow=("git__*",), deny=("shell",), ask=("mcp.*",))
    assert policy.verdict("shell", needs_approval=False) == "deny"
    assert policy.verdict("mcp.fs__read", needs_approval=False) == "ask"
    assert policy.verdict("git__push", needs_approval=True) == "run"
    assert policy.verdict("write", needs_approval=True) == "ask"
    assert policy.verdict("write", needs_approval=False) == "run"
    assert Policy("allow").verdict("write", needs_approval=True) == "run"
    assert Policy("deny").verdict("write", needs_approval=True) == "deny"
    both = Policy("allow", allow=("shell",), ask=("sh*",))
    assert both.verdict("shell", needs_approval=False) == "ask"  # ask is checked before allow


def test_the_project_narrows_and_never_widens() -> None:
    user = {"mode": "allow", "allow": ["git__*"], "timeout": 60}
    project = {
        "mode": "ask",
        "allow": ["shell"],
        "deny": ["rm"],
        "ask": ["git__push"],
        "timeout": 5,
    }
    policy = effective(user, project)
    assert (policy.mode, policy.allow, policy.deny, policy.ask, policy.timeout) == (
        "ask",
        ("git__*",),
        ("rm",),
        ("git__push",),
        5.0,
    )
    assert policy.verdict("shell", needs_approval=True) == "ask"  # the project's allow is ignored
    assert policy.verdict("git__push", needs_approval=True) == "ask"
    assert policy.warnings == (
        "[approvals] allow in the project's agent-host.toml is ignored: "
        "only the user's configuration may allow",
    )
    assert effective({"mode": "deny"}, {"mode": "allow"}).mode == "deny"
    assert effective(None, None) == Policy()


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"mode": "sometimes"}, "f.toml: [approvals] mode: must be one of 'ask', 'allow', 'deny'"),
        ({"deny": "shell"}, "f.toml: [approvals] deny: expected array, got string"),
        ({"timeout": 0}, "f.toml: [approvals] timeout: must be a positive number of seconds"),
        ({"ask": ["x"], "when": 1}, "f.toml: [approvals] when: unknown key"),
        ("yes", "f.toml: [approvals] must be a table"),
    ],
)
def test_a_bad_table_is_one_line_naming_the_file_and_key(table: object, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse(table, "f.toml")
    assert raised.value.message == message


def test_globs_that_match_no_tool_are_named() -> None:
    policy = Policy(deny=("shel*", "nothing*"), allow=("git__*",))
    assert policy.unmatched(["shell", "word_count"]) == [
        '[approvals] deny glob "nothing*" matches no tool',
        '[approvals] allow glob "git__*" matches no tool',
    ]


def agent_host(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_HOST_", "OPENAI_"))}
    env["AGENT_HOST_HOME"] = str(home)
    command = [sys.executable, "-m", "host.cli.main", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


def test_the_cli_reads_the_user_file_narrowed_by_the_project(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (home / "agent-host.toml").write_text('[approvals]\nmode = "allow"\nallow = ["ask_*"]\n')
    (project / "agent-host.toml").write_text('[approvals]\nmode = "ask"\nallow = ["shell"]\n')
    listed = agent_host("plugins", "--json", cwd=project, home=home)
    assert listed.returncode == 0, listed.stderr
    row = next(r for r in json.loads(listed.stdout) if r["name"] == "approvals")
    assert row["state"] == "active"
    assert "[approvals] allow in the project's agent-host.toml is ignored" in listed.stderr


def test_a_bad_user_file_is_one_error_line(tmp_path: Path) -> None:
    (tmp_path / "agent-host.toml").write_text('[approvals]\nmode = "later"\n')
    result = agent_host("plugins", cwd=tmp_path, home=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"agent-host: error: {tmp_path / 'agent-host.toml'}: [approvals] mode: "
        "must be one of 'ask', 'allow', 'deny'"
    ]


def test_a_glob_of_a_plugins_later_tools_is_not_a_warning() -> None:
    policy = Policy(ask=("mcp.*", "nothing*"))
    assert policy.unmatched(["shell"], ["mcp", "openai"]) == [
        '[approvals] ask glob "nothing*" matches no tool'
    ]


def test_the_cli_warns_of_a_glob_that_matches_no_tool(tmp_path: Path) -> None:
    (tmp_path / "agent-host.toml").write_text('[approvals]\ndeny = ["shel*"]\n')
    result = agent_host("plugins", cwd=tmp_path, home=tmp_path / "home")
    assert result.returncode == 0, result.stderr
    assert '[approvals] deny glob "shel*" matches no tool' in result.stderr


def test_a_projects_plugins_approvals_table_cannot_switch_approvals_off(tmp_path: Path) -> None:
    (tmp_path / "agent-host.toml").write_text(
        '[plugins.approvals]\nmode = "allow"\nallow = ["*"]\n'
    )
    result = agent_host("plugins", cwd=tmp_path, home=tmp_path / "home")
    assert result.returncode == 0, result.stderr
    assert "[plugins.approvals] is ignored: the approval policy is [approvals]" in result.stderr
