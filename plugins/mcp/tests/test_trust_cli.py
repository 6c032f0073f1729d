"""``agent-host mcp trust|untrust`` as a user runs it: what it shows is what will run, as written
in the project's files, and never a secret from the user's environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from agent_host_mcp.config import load_servers
from agent_host_mcp.trust import TrustStore

AGENT_HOST = str(Path(sys.executable).parent / "agent-host")
SECRETS = {
    "ACC_SECRET": "acc-secret-value",
    "DOCS_TOKEN": "docs-token-value",
    "SEARCH_TOKEN": "search-token-value",
    "WORK": "/srv/work-dir-value",
}
MEMORY_ENV = {
    "NODE_OPTIONS": "--require ./payload.cjs",
    "API_KEY": "${ACC_SECRET}",
    "LEVEL": "${LOG_LEVEL:-info}",
}
MEMORY = {
    "command": "node",
    "args": ["/opt/server-memory/dist/index.js", "--key=${ACC_SECRET}"],
    "env": MEMORY_ENV,
}
DOCS = {
    "type": "http",
    "url": "https://mcp.example/mcp?key=${ACC_SECRET}",
    "headers": {"Authorization": "Bearer ${DOCS_TOKEN}", "X-Client": "agent-host"},
}
BAD = {"command": "x", "env": {"T": "${AGENT_HOST_TEST_UNSET_VAR}"}}
PROJECT_TOML = """\
[plugins.mcp.servers.builder]
command = "./bin/build-server"
args = ["--out", "${WORK}/out"]
cwd = "${WORK}"

[plugins.mcp.servers.search]
url = "https://search.example/mcp"
headers = { Authorization = "SEARCH_TOKEN" }
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A cloned project defining servers in both its .mcp.json and its agent-host.toml."""
    root = tmp_path / "cloned"
    root.mkdir()
    servers = {"memory": MEMORY, "docs": DOCS, "bad": BAD}
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    (root / "agent-host.toml").write_text(PROJECT_TOML)
    return root


def mcp(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``agent-host mcp ARGS`` in ``project``, its trust store in the test's own home."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_HOST_")}
    env |= SECRETS | {"AGENT_HOST_HOME": str(project.parent / "home"), "NO_COLOR": "1"}
    env.pop("LOG_LEVEL", None)
    done = subprocess.run(
        [AGENT_HOST, "mcp", *args], capture_output=True, text=True, env=env, cwd=project, timeout=60
    )
    for value in SECRETS.values():
        assert value not in done.stdout + done.stderr  # never an expanded value
    assert "Traceback" not in done.stderr
    return done


def test_trust_shows_every_part_of_a_stdio_server_as_written(project):
    done = mcp(project, "trust", "memory")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == [
        f'MCP server "memory" (.mcp.json) is trusted in {project}; it runs:',
        '  command: "node"',
        '  args: ["/opt/server-memory/dist/index.js", "--key=${ACC_SECRET}"]',
        '  env NODE_OPTIONS: "--require ./payload.cjs"',
        '  env API_KEY: "${ACC_SECRET}"',
        '  env LEVEL: "${LOG_LEVEL:-info}"',
        "  sends your $ACC_SECRET to this server",
        "  sends your $LOG_LEVEL to this server",
    ]


def test_trust_shows_the_directory_a_server_runs_in(project):
    done = mcp(project, "trust", "builder")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == [
        f'MCP server "builder" (agent-host.toml) is trusted in {project}; it runs:',
        '  command: "./bin/build-server"',
        '  args: ["--out", "${WORK}/out"]',
        '  cwd: "${WORK}"',
        "  sends your $WORK to this server",
    ]


def test_trust_shows_where_an_http_server_connects_and_where_each_header_comes_from(project):
    docs = mcp(project, "trust", "docs")
    assert (docs.returncode, docs.stderr) == (0, "")
    assert docs.stdout.splitlines() == [
        f'MCP server "docs" (.mcp.json) is trusted in {project}; it connects to:',
        '  url: "https://mcp.example/mcp?key=${ACC_SECRET}"',
        '  header Authorization: "Bearer ${DOCS_TOKEN}"',
        '  header X-Client: "agent-host"',
        "  sends your $ACC_SECRET to this server",
        "  sends your $DOCS_TOKEN to this server",
    ]
    search = mcp(project, "trust", "search")
    assert search.stdout.splitlines() == [
        f'MCP server "search" (agent-host.toml) is trusted in {project}; it connects to:',
        '  url: "https://search.example/mcp"',
        "  header Authorization: the value of $SEARCH_TOKEN",
        "  sends your $SEARCH_TOKEN to this server",
    ]


def test_a_value_cannot_disguise_its_line(project):
    hidden = {"command": "node", "env": {"A\x1b[2K": "x\r\u202eevil\n"}}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"memory": hidden}}))
    done = mcp(project, "trust", "memory")
    assert done.stdout.splitlines()[1:] == [
        '  command: "node"',
        '  env "A\\u001b[2K": "x\\r\\u202eevil\\n"',
    ]


def test_what_was_trusted_is_what_the_files_say_and_an_edit_blocks_it_again(project):
    assert mcp(project, "trust", "memory").returncode == 0
    store = TrustStore(project.parent / "home" / "mcp-trust.json")

    def memory_spec():
        found = load_servers({}, project / ".mcp.json", SECRETS, toml_project=True,
                             mcp_json_project=True)  # fmt: skip
        return next(spec for spec in found.specs if spec.name == "memory")

    assert store.is_trusted(project, memory_spec())
    edited = {**MEMORY, "env": {**MEMORY_ENV, "NODE_OPTIONS": "--require ./other.cjs"}}
    servers = {"memory": edited, "docs": DOCS, "bad": BAD}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    assert not store.is_trusted(project, memory_spec())


def test_trust_and_untrust_of_an_invalid_definition_say_why(project):
    why = 'MCP server "bad": env.T: ${AGENT_HOST_TEST_UNSET_VAR} is not set'
    trust = mcp(project, "trust", "bad")
    assert (trust.returncode, trust.stdout) == (2, "")
    assert trust.stderr == f"agent-host: error: {why}; fix its definition to trust it\n"
    untrust = mcp(project, "untrust", "bad")
    assert (untrust.returncode, untrust.stderr) == (0, "")
    assert untrust.stdout.splitlines() == [
        f'MCP server "bad" was not trusted in {project}',
        f"{why} (it cannot start)",
    ]
    assert not (project.parent / "home" / "mcp-trust.json").exists()  # nothing changed


def test_trust_of_an_unknown_name_names_the_servers_there_are(project):
    done = mcp(project, "trust", "nope")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        'agent-host: error: no MCP server "nope" is configured (known: builder, search, memory, '
        "docs)\n"
    )
