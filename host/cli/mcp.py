"""``agent-host mcp trust|untrust NAME``: let a project's MCP server start, or stop it again.

A server defined by the project (its ``agent-host.toml`` or ``.mcp.json``) runs a command from
a repository the user may just have cloned, so it stays blocked until trusted. The decision is
kept in the user's home, keyed by the project directory and the server's definition: editing
the definition blocks it again. Runs without opening a host (nothing starts).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from host.app import HostSettings
from host.errors import HostError
from host.plugins.config import CONFIG_FILE, read_config_file


def add_parser(commands: Any) -> None:
    """The ``mcp`` command and its actions."""
    mcp = commands.add_parser("mcp", help="trust or untrust a project's MCP server")
    actions = mcp.add_subparsers(dest="mcp_action", metavar="ACTION", required=True)
    for action, text in (("trust", "let it start"), ("untrust", "block it again")):
        each = actions.add_parser(action, help=f"{text} (for this project)")
        each.add_argument("name", metavar="NAME", help="the server's name")


def command(args: argparse.Namespace) -> int:
    """Record the decision; one line says what changed."""
    try:
        from agent_host_mcp import Config, configured_servers
        from agent_host_mcp.trust import TrustStore, TrustStoreError, default_trust_path
    except ImportError:
        raise HostError(
            "MCP_UNAVAILABLE", "agent-host-mcp is not installed (pip install ./plugins/mcp)"
        ) from None
    explicit = args.config is not None
    refused: list[str] = []  # the project's own file, when refused, is skipped
    config = read_config_file(
        args.config or Path(CONFIG_FILE), explicit=explicit, refused=None if explicit else refused
    )
    table = config.get("plugins", {}).get("mcp", {}).get("servers", {})
    project = Path.cwd()
    settings = HostSettings(project_dir=project, config_trusted=explicit)
    servers = configured_servers(Config(servers=table), settings, os.environ)
    refused += [problem.message for problem in servers.problems if problem.name is None]
    for line in refused:  # a whole file skipped
        print(f"agent-host: warning: {line}", file=sys.stderr)
    store = TrustStore(default_trust_path(os.environ))
    spec = next((each for each in servers.specs if each.name == args.name), None)
    try:
        if args.mcp_action == "untrust":
            done = store.untrust(project, args.name)
            state = "no longer trusted" if done else "was not trusted"
            print(f'MCP server "{args.name}" {state} in {project}')
            return 0
        if spec is None:
            known = ", ".join(each.name for each in servers.specs) or "none"
            raise HostError(
                "MCP_UNKNOWN_SERVER", f'no MCP server "{args.name}" is configured (known: {known})'
            )
        if not spec.project:
            print(f'MCP server "{args.name}" comes from your own configuration: trusted already')
            return 0
        store.trust(project, spec)
    except TrustStoreError as error:
        raise HostError("MCP_TRUST_STORE", str(error)) from None
    print(f'MCP server "{args.name}" ({spec.source}) is trusted in {project}; it runs:')
    print(f"  {describe(spec)}")
    return 0


def describe(spec: Any) -> str:
    """What a trusted server runs: its command line (and directory), or its URL and the names of
    the headers sent (never their values)."""
    if spec.url is not None:
        headers = ", ".join(sorted(spec.headers)) or "none"
        return f"{spec.url} (headers: {headers})"
    words = " ".join(shlex.quote(word) for word in (spec.command, *spec.args))
    return words + (f" (in {spec.cwd})" if spec.cwd else "")
