"""``agent-host mcp trust|untrust NAME``: let a project's MCP server start, or stop it again;
``agent-host mcp serve``: this host's subagents as the tools of MCP clients (its server is
``agent_host_mcp.serving``, imported only here: the SDK is the plugin's dependency).

A server defined by the project (its ``agent-host.toml`` or ``.mcp.json``) runs a command from
a repository the user may just have cloned, so it stays blocked until trusted. The decision is
kept in the user's home, keyed by the project directory and the server's definition: editing
the definition blocks it again. Those two run without opening a host (nothing starts).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from host.app import Host
from host.errors import HostError
from host.plugins.config import CONFIG_FILE, read_config_file
from host.settings import HostSettings


def add_parser(commands: Any) -> None:
    """The ``mcp`` command and its actions."""
    mcp = commands.add_parser(
        "mcp", help="serve subagents to MCP clients; trust or untrust a project's MCP server"
    )
    actions = mcp.add_subparsers(dest="mcp_action", metavar="ACTION", required=True)
    serve = actions.add_parser("serve", help="serve this host's subagents as MCP tools")
    serve.add_argument(
        "--transport", choices=["stdio", "http"], default="stdio",
        help="stdio (the default) or http (with --port)",
    )
    serve.add_argument("--port", type=int, metavar="P", help="the HTTP port (with http)")
    serve.add_argument(
        "--root", metavar="NAME", help="the root session to serve (default: this directory's)"
    )
    serve.add_argument(
        "--script", type=Path, metavar="FILE", help="the scripted model answers from FILE"
    )
    for action, text in (("trust", "let it start"), ("untrust", "block it again")):
        each = actions.add_parser(action, help=f"{text} (for this project)")
        each.add_argument("name", metavar="NAME", help="the server's name")


def serve(host: Host, args: argparse.Namespace) -> int:
    """``mcp serve``: the host's subagents as the tools of MCP clients, until the client
    leaves (``agent_host_mcp.serving``)."""
    from host.cli import termination
    from host.cli.chat import choose_model

    if (args.transport == "http") != (args.port is not None):
        raise HostError("BAD_TRANSPORT", "--port P goes with --transport http, and only with it")
    if args.port is not None and not 0 < args.port < 65536:
        raise HostError("BAD_TRANSPORT", f"--port {args.port}: not a port (1-65535)")
    try:
        from agent_host_mcp.serving.main import serve
    except ImportError:
        raise HostError("MCP_UNAVAILABLE", MISSING) from None
    def ready() -> None:  # once the root is open: a refused root is the only line said
        choose_model(host, args.script, sys.stderr)

    return termination.run(serve(host, root=args.root, port=args.port, ready=ready))


MISSING = "agent-host-mcp is not installed (pip install ./plugins/mcp)"


def command(args: argparse.Namespace) -> int:
    """Record the decision; say what changed and, for ``trust``, every part of what now runs."""
    try:
        from agent_host_mcp import Config, configured_servers
        from agent_host_mcp.trust import TrustStore, TrustStoreError, default_trust_path, describe
    except ImportError:
        raise HostError("MCP_UNAVAILABLE", MISSING) from None
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
    problem = next((each.message for each in servers.problems if each.name == args.name), None)
    try:
        if args.mcp_action == "untrust":
            done = store.untrust(project, args.name)
            state = "no longer trusted" if done else "was not trusted"
            print(f'MCP server "{args.name}" {state} in {project}')
            if problem is not None:
                print(f"{problem} (it cannot start)")
            return 0
        if spec is None:
            raise HostError("MCP_UNKNOWN_SERVER", _not_trusted(args.name, problem, servers))
        if not spec.project:
            print(f'MCP server "{args.name}" comes from your own configuration: trusted already')
            return 0
        store.trust(project, spec)
    except TrustStoreError as error:
        raise HostError("MCP_TRUST_STORE", str(error)) from None
    does = "connects to" if spec.url is not None else "runs"
    print(f'MCP server "{args.name}" ({spec.source}) is trusted in {project}; it {does}:')
    for line in describe(spec):
        print(f"  {line}")
    return 0


def _not_trusted(name: str, problem: str | None, servers: Any) -> str:
    """Why ``name`` cannot be trusted: its definition's problem, or that it has none."""
    if problem is not None:
        return f"{problem}; fix its definition to trust it"
    known = ", ".join(each.name for each in servers.specs) or "none"
    return f'no MCP server "{name}" is configured (known: {known})'
