"""MCP server definitions: both sources, their merge, expansion, and one line per bad server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agent_host_mcp.config import ServerProblem, Servers, ServerSpec, load_servers

ENV = {"HOME": "/home/u", "TOKEN": "s3cret", "EMPTY": ""}
X = 'MCP server "x": '  # every line about server "x" starts so
SECONDS = "must be a positive number of seconds"


def load(
    table: dict[str, Any] | None = None,
    mcp_json: Any = None,
    tmp_path: Path | None = None,
    environ: dict[str, str] | None = None,
) -> Servers:
    """``load_servers`` over ``table`` and, if given, a .mcp.json holding ``mcp_json``."""
    path = None
    if mcp_json is not None:
        assert tmp_path is not None
        path = tmp_path / ".mcp.json"
        path.write_text(mcp_json if isinstance(mcp_json, str) else json.dumps(mcp_json))
    return load_servers(
        table or {},
        path,
        ENV if environ is None else environ,
        toml_project=False,
        mcp_json_project=True,
    )


def one(table: dict[str, Any]) -> ServerSpec:
    found = load(table)
    assert found.problems == [] and found.warnings == []
    [spec] = found.specs
    return spec


def problem(definition: Any, name: str = "x") -> str:
    """The one problem line of agent-host.toml server ``name`` defined as ``definition``."""
    found = load({name: definition})
    assert found.specs == []
    [bad] = found.problems
    assert bad.name == name
    return bad.message


def json_problem(tmp_path: Path, definition: Any) -> str:
    found = load(mcp_json={"mcpServers": {"x": definition}}, tmp_path=tmp_path)
    assert found.specs == []
    [bad] = found.problems
    assert bad.name == "x"
    return bad.message


# --- agent-host.toml ---------------------------------------------------------------------------


def test_toml_stdio_server_with_defaults():
    spec = one({"time": {"command": "uvx", "args": ["mcp-server-time"]}})
    expected = ServerSpec("time", "stdio", "uvx", ("mcp-server-time",), written=spec.written)
    assert spec == expected
    assert (spec.env, spec.cwd, spec.url, spec.headers, spec.allow, spec.deny) == (
        {}, None, None, {}, None, ()
    )  # fmt: skip
    assert (spec.startup_timeout, spec.call_timeout, spec.source, spec.project) == (
        30.0, 300.0, "agent-host.toml", False
    )  # fmt: skip


def test_toml_every_stdio_key():
    spec = one(
        {
            "git": {
                "command": "${HOME}/bin/git-mcp",
                "args": ["--repo", "${REPO:-.}"],
                "env": {"GIT_TOKEN": "${TOKEN}", "PLAIN": "x", "BOTH": "${HOME}:${TOKEN}"},
                "cwd": "${HOME}/src",
                "allow": ["git_*"],
                "deny": ["git_push"],
                "startup_timeout": 5,
                "call_timeout": 12.5,
            }
        }
    )
    assert spec.command == "/home/u/bin/git-mcp"
    assert spec.args == ("--repo", ".")
    assert spec.env == {"GIT_TOKEN": "s3cret", "PLAIN": "x", "BOTH": "/home/u:s3cret"}
    assert spec.cwd == "/home/u/src"
    assert (spec.allow, spec.deny) == (("git_*",), ("git_push",))
    assert (spec.startup_timeout, spec.call_timeout) == (5.0, 12.5)


def test_toml_http_server_headers_name_environment_variables():
    spec = one({"web": {"url": "https://example.test/mcp", "headers": {"Authorization": "TOKEN"}}})
    assert spec.transport == "http"
    assert (spec.url, spec.headers, spec.command, spec.args) == (
        "https://example.test/mcp", {"Authorization": "s3cret"}, None, ()
    )  # fmt: skip


def test_default_expansion_applies_when_unset_or_empty():
    spec = one(
        {"x": {"command": "c", "env": {"A": "${EMPTY:-d}", "B": "${NOPE:-}", "C": "${EMPTY}"}}}
    )
    assert spec.env == {"A": "d", "B": "", "C": ""}


@pytest.mark.parametrize(
    ("definition", "line"),
    [
        ({"command": "c", "env": {"FOO": "${BAR}"}}, X + "env.FOO: ${BAR} is not set"),
        ({"command": "c", "args": ["a", "${BAR}"]}, X + "args[1]: ${BAR} is not set"),
        ({"command": "${BIN}/c"}, X + "command: ${BIN} is not set"),
        ({"command": "c", "cwd": "${DIR}"}, X + "cwd: ${DIR} is not set"),
        ({"url": "https://${HOST}/mcp"}, X + "url: ${HOST} is not set"),
        (
            {"url": "https://h/mcp", "headers": {"Authorization": "MY_TOKEN_ENV"}},
            X + "headers.Authorization: environment variable MY_TOKEN_ENV is not set",
        ),
        (
            {"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
            X + 'headers.Authorization: "Bearer ${TOKEN}" is not an environment '
            "variable name (header values name the variable holding them)",
        ),
        ({"command": "c", "bogus": 1}, X + 'unknown key "bogus"'),
        ({"command": "c", "type": "stdio"}, X + 'unknown key "type"'),
        ({"command": "c", "args": "a b"}, X + "args: must be a list of strings"),
        ({"command": "c", "args": ["a", 1]}, X + "args: must be a list of strings"),
        ({"command": "c", "env": {"A": 1}}, X + "env: must map names to strings"),
        ({"command": "c", "env": ["A=1"]}, X + "env: must map names to strings"),
        ({"command": ["c"]}, X + "command: must be a non-empty string"),
        ({"command": ""}, X + "command: must be a non-empty string"),
        ({"command": "c", "cwd": 3}, X + "cwd: must be a non-empty string"),
        ({"command": "c", "allow": "read_*"}, X + "allow: must be a list of strings"),
        ({"command": "c", "deny": [None]}, X + "deny: must be a list of strings"),
        ({"command": "c", "startup_timeout": 0}, X + "startup_timeout: " + SECONDS),
        ({"command": "c", "startup_timeout": float("inf")}, X + "startup_timeout: " + SECONDS),
        ({"command": "c", "call_timeout": True}, X + "call_timeout: " + SECONDS),
        ({"command": "c", "call_timeout": "10"}, X + "call_timeout: " + SECONDS),
        (
            {"command": "c", "url": "https://h"},
            X + "give either command (stdio) or url (http), not both",
        ),
        ({"args": ["a"]}, X + "needs command (stdio) or url (http)"),
        ({}, X + "needs command (stdio) or url (http)"),
        ({"command": "c", "headers": {}}, X + "headers: only for http servers"),
        ({"url": "https://h", "args": []}, X + "args: only for stdio servers"),
        ({"url": "https://h", "cwd": "/"}, X + "cwd: only for stdio servers"),
        ({"url": "ftp://h/x"}, X + "url: must be an http:// or https:// URL"),
        ({"url": "localhost:8000"}, X + "url: must be an http:// or https:// URL"),
        ("uvx thing", X + "must be a table"),
    ],
)
def test_bad_toml_definition_is_one_line(definition, line):
    assert problem(definition) == line


def test_long_unknown_key_is_cut_to_one_line():
    line = problem({"command": "c", "a\n" + "k" * 200: 1})
    assert line == 'MCP server "x": unknown key "a\\n' + "k" * 37 + '…"'


def test_a_bad_server_leaves_the_others_alone():
    found = load(
        {
            "good": {"command": "c"},
            "bad": {"command": "c", "env": {"FOO": "${BAR}"}},
            "also": {"url": "http://127.0.0.1:9/mcp"},
        }
    )
    assert [spec.name for spec in found.specs] == ["good", "also"]
    assert found.problems == [ServerProblem("bad", 'MCP server "bad": env.FOO: ${BAR} is not set')]


@pytest.mark.parametrize("name", ["has space", "a.b", "", "x" * 33, "é"])
def test_invalid_server_name_is_a_warning_and_skipped(name):
    found = load({name: {"command": "c"}, "ok": {"command": "c"}})
    assert [spec.name for spec in found.specs] == ["ok"]
    assert found.problems == []
    shown = json.dumps(name if len(name) <= 40 else name[:39] + "…", ensure_ascii=False)
    assert found.warnings == [
        f"MCP server name {shown} in agent-host.toml is not 1-32 of [A-Za-z0-9_-]; skipped"
    ]


def test_longest_valid_name():
    assert one({"A-z_09" + "x" * 26: {"command": "c"}}).name == "A-z_09" + "x" * 26


# --- .mcp.json ---------------------------------------------------------------------------------


def test_claude_code_mcp_json(tmp_path):
    found = load(
        mcp_json={
            "mcpServers": {
                "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
                "explicit": {"type": "stdio", "command": "srv"},
                "web": {
                    "type": "http",
                    "url": "https://${NOPE:-example.test}/mcp",
                    "headers": {"Authorization": "Bearer ${TOKEN}", "X-Plain": "v"},
                },
                "streamed": {"type": "streamable-http", "url": "http://127.0.0.1:8000/mcp"},
                "inferred": {"url": "http://127.0.0.1:8001/mcp"},
            },
            "otherAgentKey": True,
        },
        tmp_path=tmp_path,
    )
    assert found.problems == [] and found.warnings == []
    time, explicit, web, streamed, inferred = found.specs
    assert (time.transport, time.command, time.args, time.env) == (
        "stdio", "uvx", ("mcp-server-time",), {"TZ": "UTC"}
    )  # fmt: skip
    assert (time.source, time.project) == (".mcp.json", True)
    assert (explicit.transport, explicit.command) == ("stdio", "srv")
    assert (web.transport, web.url) == ("http", "https://example.test/mcp")
    assert web.headers == {"Authorization": "Bearer s3cret", "X-Plain": "v"}
    assert (streamed.transport, streamed.url) == ("http", "http://127.0.0.1:8000/mcp")
    assert inferred.transport == "http"


@pytest.mark.parametrize(
    ("definition", "line"),
    [
        ({"type": "sse", "url": "https://h/sse"}, X + 'transport "sse" is not supported'),
        ({"type": "ws", "url": "h"}, X + 'type: must be "stdio", "http" or "streamable-http"'),
        ({"type": "http"}, X + "url: required for http servers"),
        ({"type": "stdio", "args": []}, X + "command: required for stdio servers"),
        ({"type": "http", "url": "h", "command": "c"}, X + "command: only for stdio servers"),
        ({"command": "c", "cwd": "/tmp"}, X + 'unknown key "cwd"'),
        ({"command": "c", "allow": ["a"]}, X + 'unknown key "allow"'),
        (
            {"type": "http", "url": "https://h", "headers": {"A": "${MISSING}"}},
            X + "headers.A: ${MISSING} is not set",
        ),
        (
            {"type": "http", "url": "https://h", "headers": {"A": 1}},
            X + "headers: must map names to strings",
        ),
        ({"command": None}, X + "command: must be a non-empty string"),
        (["uvx"], X + "must be an object"),
    ],
)
def test_bad_mcp_json_definition_is_one_line(tmp_path, definition, line):
    assert json_problem(tmp_path, definition) == line


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"mcpServers": {', "not valid JSON: Expecting property name enclosed in double quotes"),
        ("", "not valid JSON: Expecting value (line 1 column 1)"),
        ('["x"]', 'expected {"mcpServers": {"<name>": {...}}}'),
        ('{"servers": {}}', 'expected {"mcpServers": {"<name>": {...}}}'),
        ('{"mcpServers": []}', 'expected {"mcpServers": {"<name>": {...}}}'),
    ],
)
def test_bad_mcp_json_file_is_one_problem_and_toml_servers_still_load(tmp_path, text, why):
    found = load({"t": {"command": "c"}}, mcp_json=text, tmp_path=tmp_path)
    assert [spec.name for spec in found.specs] == ["t"]
    [bad] = found.problems
    assert bad.name is None
    assert bad.message.startswith(f"{tmp_path / '.mcp.json'}: {why}")
    assert bad.message.endswith("; no MCP server from it loads")
    assert "\n" not in bad.message


def test_unreadable_mcp_json_is_one_problem(tmp_path):
    (tmp_path / ".mcp.json").mkdir()
    found = load_servers({}, tmp_path / ".mcp.json", ENV, toml_project=True, mcp_json_project=True)
    assert found.specs == []
    [bad] = found.problems
    assert bad.name is None
    assert bad.message == (
        f"{tmp_path / '.mcp.json'}: is a directory, not a regular file; no MCP server from it loads"
    )


def test_missing_mcp_json_or_none_is_no_servers(tmp_path):
    for path in (tmp_path / ".mcp.json", None):
        found = load_servers({}, path, ENV, toml_project=True, mcp_json_project=True)
        assert found == Servers()


def test_mcp_json_with_byte_order_mark(tmp_path):
    path = tmp_path / ".mcp.json"
    path.write_text('\ufeff{"mcpServers": {"a": {"command": "c"}}}', encoding="utf-8")
    found = load_servers({}, path, ENV, toml_project=False, mcp_json_project=True)
    assert [spec.name for spec in found.specs] == ["a"]


# --- merging -----------------------------------------------------------------------------------


def test_toml_wins_a_name_clash_with_a_warning_and_order_is_toml_then_json(tmp_path):
    found = load(
        {"b": {"command": "from-toml"}, "a": {"url": "https://h"}},
        mcp_json={
            "mcpServers": {
                "z": {"command": "z"},
                "b": {"command": "from-json"},
                "c": {"command": "c"},
            }
        },
        tmp_path=tmp_path,
    )
    assert [(spec.name, spec.source) for spec in found.specs] == [
        ("b", "agent-host.toml"),
        ("a", "agent-host.toml"),
        ("z", ".mcp.json"),
        ("c", ".mcp.json"),
    ]
    assert found.specs[0].command == "from-toml"
    assert found.warnings == [
        'MCP server "b" is defined in both agent-host.toml and .mcp.json; agent-host.toml wins'
    ]
    assert found.problems == []


def test_toml_wins_even_when_its_definition_is_bad(tmp_path):
    found = load(
        {"b": {"command": "c", "nope": 1}},
        mcp_json={"mcpServers": {"b": {"command": "fine"}}},
        tmp_path=tmp_path,
    )
    assert found.specs == []
    assert found.problems == [ServerProblem("b", 'MCP server "b": unknown key "nope"')]
    assert len(found.warnings) == 1


def test_project_flags_mark_each_source(tmp_path):
    path = tmp_path / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": {"j": {"command": "c"}}}))
    found = load_servers(
        {"t": {"command": "c"}}, path, ENV, toml_project=True, mcp_json_project=False
    )
    assert [(spec.name, spec.project) for spec in found.specs] == [("t", True), ("j", False)]


# --- fingerprint and filters -------------------------------------------------------------------


def fingerprint(definition: dict[str, Any], environ: dict[str, str] | None = None) -> str:
    [spec] = load({"x": definition}, environ=environ).specs
    return spec.fingerprint()


def test_fingerprint_changes_with_what_runs_and_not_with_the_environment():
    base = {"command": "c", "args": ["a"], "env": {"K": "${TOKEN}"}}
    first = fingerprint(base)
    assert len(first) == 64 and int(first, 16) >= 0
    assert fingerprint(base, {"TOKEN": "other"}) == first  # unexpanded values are hashed
    assert fingerprint({"env": {"K": "${TOKEN}"}, "args": ["a"], "command": "c"}) == first
    assert fingerprint(base | {"allow": ["x"], "call_timeout": 9}) == first
    for changed in (
        base | {"command": "d"},
        base | {"args": ["a", "b"]},
        base | {"env": {"K": "${HOME}"}},
        base | {"cwd": "/"},
    ):
        assert fingerprint(changed) != first
    http = {"url": "https://h/mcp", "headers": {"A": "TOKEN"}}
    assert fingerprint(http | {"url": "https://h/other"}) != fingerprint(http)
    assert fingerprint(http | {"headers": {"A": "HOME"}}) != fingerprint(http)


def test_fingerprint_differs_between_sources(tmp_path):
    definition = {"command": "c"}
    [toml] = load({"x": definition}).specs
    [from_json] = load(mcp_json={"mcpServers": {"x": definition}}, tmp_path=tmp_path).specs
    assert toml.fingerprint() != from_json.fingerprint()


def test_fingerprint_of_a_spec_built_by_hand_follows_its_fields():
    spec = ServerSpec(name="x", transport="stdio", command="c")
    assert spec.fingerprint() == ServerSpec(name="y", transport="stdio", command="c").fingerprint()
    assert spec.fingerprint() != ServerSpec(name="x", transport="stdio", command="d").fingerprint()


def test_allows_applies_allow_then_deny():
    everything = ServerSpec(name="x", transport="stdio", command="c")
    assert everything.allows("anything")
    spec = ServerSpec(
        name="x", transport="stdio", command="c", allow=("git_*", "status"), deny=("git_push*",)
    )
    assert spec.allows("git_log") and spec.allows("status")
    assert not spec.allows("git_push") and not spec.allows("git_push_force")
    assert not spec.allows("Status")  # case-sensitive on every platform
    assert not spec.allows("rm")
    assert not ServerSpec(name="x", transport="stdio", command="c", allow=()).allows("a")
