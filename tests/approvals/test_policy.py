"""The ``[approvals]`` policy: rules, the no-widening merge, bad tables, and the CLI reading it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from host.approvals.policy import Policy, effective, parse
from host.errors import ConfigError
from tests.cli.support import agent_host


def test_deny_then_ask_then_allow_then_the_mode() -> None:
    policy = Policy("ask", allow=("git__*",), deny=("shell",), ask=("mcp.*",))
    assert policy.verdict("shell", needs_approval=False) == "deny"
    assert policy.verdict("fs__read", needs_approval=False, plugin="mcp.fs") == "ask"
    assert policy.verdict("fs__read", needs_approval=False) == "run"  # registered by no plugin
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
    assert effective(None, None) == Policy()


@pytest.mark.parametrize(("user", "project"), [("ask", "allow"), ("deny", "allow"), ("deny", "ask")])
def test_a_project_mode_that_would_loosen_the_users_is_ignored_with_a_warning(
    user: str, project: str
) -> None:
    policy = effective({"mode": user}, {"mode": project}, project_where="p/agent-host.toml")
    assert policy.mode == user
    assert policy.warnings == (
        f'[approvals] mode "{project}" in the project\'s agent-host.toml is ignored: '
        f'it would loosen the user\'s mode "{user}"',
    )


def test_a_project_mode_as_strict_or_stricter_or_left_out_is_no_warning() -> None:
    assert effective({"mode": "allow"}, {"mode": "ask"}).mode == "ask"
    assert effective({"mode": "ask"}, {"mode": "deny"}).mode == "deny"
    for user, project in [("allow", {"mode": "ask"}), ("ask", {"mode": "ask"}), ("deny", {})]:
        assert effective({"mode": user}, project).warnings == ()
    assert effective({"mode": "deny"}, {"allow": []}).warnings == ()  # an empty allow grants nothing


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


def test_globs_that_match_no_tool_and_no_plugin_are_named() -> None:
    policy = Policy(deny=("shel*", "nothing*"), allow=("git__*", "approvals"))
    tools = {"shell": "builtins", "word_count": None}
    assert policy.unmatched(tools, {"builtins": True, "approvals": True}) == [
        '[approvals] deny glob "nothing*" matches no tool and no plugin',
        '[approvals] allow glob "git__*" matches no tool and no plugin',
        '[approvals] allow glob "approvals" matches plugin "approvals", which registers no tool',
    ]


def test_a_plugin_glob_allows_its_own_tools_only_not_a_sub_plugins() -> None:
    policy = Policy("ask", allow=("mcp", "shell"))
    assert policy.verdict("git__push", needs_approval=True, plugin="mcp.git") == "ask"
    assert policy.verdict("run", needs_approval=True, plugin="shell.remote") == "ask"
    assert policy.verdict("shell", needs_approval=True, plugin="builtins") == "run"
    assert Policy(deny=("mcp",)).verdict("git__push", False, plugin="mcp.git") == "run"


def plugins_listed(tmp_path: Path, user: str, project: str) -> subprocess.CompletedProcess[str]:
    """``plugins --json`` in a project whose agent-host.toml is ``project``, the user's
    ``user``; it succeeded."""
    home, directory = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    directory.mkdir()
    (home / "agent-host.toml").write_text(user)
    (directory / "agent-host.toml").write_text(project)
    listed = agent_host("plugins", "--json", cwd=directory, AGENT_HOST_HOME=str(home))
    assert listed.returncode == 0, listed.stderr
    return listed


def test_the_cli_reads_the_user_file_narrowed_by_the_project(tmp_path: Path) -> None:
    user = '[approvals]\nmode = "allow"\nallow = ["ask_*"]\n'
    listed = plugins_listed(tmp_path, user, '[approvals]\nmode = "ask"\nallow = ["shell"]\n')
    row = next(r for r in json.loads(listed.stdout) if r["name"] == "approvals")
    assert row["state"] == "active"
    assert "[approvals] allow in the project's agent-host.toml is ignored" in listed.stderr


def test_a_bad_user_file_is_one_error_line(tmp_path: Path) -> None:
    (tmp_path / "agent-host.toml").write_text('[approvals]\nmode = "later"\n')
    result = agent_host("plugins", cwd=tmp_path, AGENT_HOST_HOME=str(tmp_path))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"agent-host: error: {tmp_path / 'agent-host.toml'}: [approvals] mode: "
        "must be one of 'ask', 'allow', 'deny'"
    ]


def test_a_dotted_glob_is_a_warning_unless_a_plugin_has_that_name() -> None:
    policy = Policy(ask=("mcp.*", "nothing*"))
    assert policy.unmatched({"shell": None}, {"mcp": True, "openai": True}) == [
        '[approvals] ask glob "mcp.*" matches no tool and no plugin',
        '[approvals] ask glob "nothing*" matches no tool and no plugin',
    ]
    assert policy.unmatched({"shell": None, "git__log": "mcp.git"}, {"mcp.git": True}) == [
        '[approvals] ask glob "nothing*" matches no tool and no plugin'
    ]
    assert policy.unmatched({"shell": None}, {"mcp": True, "mcp.git": False}) == [
        '[approvals] ask glob "nothing*" matches no tool and no plugin'
    ]  # a server that does not run (blocked, failed) may yet register tools


def test_the_cli_warns_of_a_glob_that_matches_no_tool(tmp_path: Path) -> None:
    (tmp_path / "agent-host.toml").write_text('[approvals]\ndeny = ["shel*", "mcp.*"]\n')
    result = agent_host("plugins", cwd=tmp_path, AGENT_HOST_HOME=str(tmp_path / "home"))
    assert result.returncode == 0, result.stderr
    assert '[approvals] deny glob "shel*" matches no tool and no plugin' in result.stderr
    assert '[approvals] deny glob "mcp.*" matches no tool and no plugin' in result.stderr


def test_the_cli_warns_of_a_project_mode_that_would_loosen_the_users(tmp_path: Path) -> None:
    listed = plugins_listed(tmp_path, '[approvals]\nmode = "ask"\n', '[approvals]\nmode = "allow"\n')
    assert listed.stderr.splitlines() == [
        'agent-host: warning: [approvals] mode "allow" in the project\'s agent-host.toml is '
        'ignored: it would loosen the user\'s mode "ask"'
    ]


def test_a_projects_plugins_approvals_table_cannot_switch_approvals_off(tmp_path: Path) -> None:
    (tmp_path / "agent-host.toml").write_text(
        '[plugins.approvals]\nmode = "allow"\nallow = ["*"]\n'
    )
    result = agent_host("plugins", cwd=tmp_path, AGENT_HOST_HOME=str(tmp_path / "home"))
    assert result.returncode == 0, result.stderr
    assert "[plugins.approvals] is ignored: the approval policy is [approvals]" in result.stderr
