"""Tool globs and MCP servers: the approval policy's over a real server at the real command
line (``mcp.*`` is every MCP tool: the plugin ``mcp.<server>`` registered it; ``mcp``, which
registers none, matches none; a glob matching no tool is a warning at start), and a server's own
``allow``/``deny``."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from agent_host_mcp.config import ServerSpec

from tests.cli.support import agent_host

TIME = Path(sys.executable).parent / "mcp-server-time"
CALL = {"name": "time__get_current_time", "arguments": {"timezone": "UTC"}}


def run_calling_time(tmp_path: Path, approvals: str) -> tuple[str, list[str]]:
    """``agent-host --config`` with the time server and ``approvals``, a scripted model calling
    its tool: stderr, and the root session as ``sessions show`` prints it."""
    config = tmp_path / "config.toml"
    server = f"[plugins.mcp.servers.time]\ncommand = {json.dumps(str(TIME))}\n"
    config.write_text(f"[approvals]\n{approvals}\n\n{server}")
    (tmp_path / "script.json").write_text(json.dumps({"user": [{"tool_calls": [CALL]}, "Done."]}))
    home = str(tmp_path / "home")
    args = ("--config", str(config))
    script = ("run", "--script", "script.json", "time?")
    result = agent_host(*args, *script, cwd=tmp_path, stdin="", AGENT_HOST_HOME=home)
    assert (result.returncode, result.stdout) == (0, "Done.\n"), result.stderr
    listed = agent_host(*args, "sessions", "list", "--json", cwd=tmp_path, AGENT_HOST_HOME=home)
    (root,) = [row["id"] for row in json.loads(listed.stdout) if not row["origin"]]
    shown = agent_host(*args, "sessions", "show", root, cwd=tmp_path, AGENT_HOST_HOME=home)
    return result.stderr, shown.stdout.splitlines()


def test_deny_mcp_star_denies_a_real_servers_tool(tmp_path: Path) -> None:
    stderr, log = run_calling_time(tmp_path, 'deny = ["mcp.*"]')
    assert stderr == (  # run shows the call and its result
        '⏺ time__get_current_time {"timezone": "UTC"}\n'
        "  ✗ the user denied time__get_current_time: the approval policy does not allow it\n"
    )
    assert (
        "  ✗ the user denied time__get_current_time: the approval policy does not allow it" in log
    )
    assert not any("datetime" in line for line in log)  # the server never ran it


def test_ask_mcp_star_asks_before_a_real_servers_tool_runs(tmp_path: Path) -> None:
    stderr, log = run_calling_time(tmp_path, 'ask = ["mcp.*"]')
    assert re.fullmatch(
        r'⏺ time__get_current_time \{"timezone": "UTC"\}\n'
        r"agent-host: approval denied \(no terminal to ask\): agent_[0-9a-f]{32} \(user, depth 0\)"
        r' wants to run time__get_current_time \{"timezone": "UTC"\}\n'
        r"  ✗ the user denied time__get_current_time: no terminal to ask\n",
        stderr,
    ), stderr
    assert "  ✗ the user denied time__get_current_time: no terminal to ask" in log


def test_a_glob_matching_no_tool_and_no_plugin_is_a_warning_at_start(tmp_path: Path) -> None:
    approvals = 'ask = ["mcp.time", "mcp.fetch", "time__*"]\nallow = ["fetch__*"]'
    stderr, log = run_calling_time(tmp_path, approvals)
    warnings = [line for line in stderr.splitlines() if "warning" in line]
    assert warnings == [
        'agent-host: warning: [approvals] ask glob "mcp.fetch" matches no tool and no plugin',
        'agent-host: warning: [approvals] allow glob "fetch__*" matches no tool and no plugin',
    ]
    assert "  ✗ the user denied time__get_current_time: no terminal to ask" in log


def test_a_glob_naming_the_mcp_plugin_denies_nothing_and_is_a_warning(tmp_path: Path) -> None:
    stderr, log = run_calling_time(tmp_path, 'deny = ["mcp"]')
    assert stderr.splitlines() == [
        'agent-host: warning: [approvals] deny glob "mcp" matches plugin "mcp", which registers '
        'no tool; "mcp.*" matches its sub-plugins\' tools',
        '⏺ time__get_current_time {"timezone": "UTC"}',  # run shows the call and its result
        "  ⎿ {",
    ]
    assert any("datetime" in line for line in log)  # the server ran it


def test_a_servers_allow_and_deny_match_its_tools_names_or_its_plugin() -> None:
    def spec(allow: tuple[str, ...] | None = None, deny: tuple[str, ...] = ()) -> ServerSpec:
        return ServerSpec(name="git", transport="stdio", command="c", allow=allow, deny=deny)

    assert not spec(deny=("mcp.git",)).allows("git_status")
    assert spec(deny=("mcp",)).allows("git_status")  # the plugin running the servers: no tool
    assert not spec(allow=("mcp",)).allows("git_status")
    assert spec(deny=("mcp.time",)).allows("git_status")
    assert spec(allow=("mcp.*",)).allows("git_status")
    assert not spec(allow=("git__*",)).allows("git_status")  # its MCP name, not the host's
    assert spec(allow=("git_*",), deny=("mcp.time",)).allows("git_status")
