"""``agent-host app-server [--listen stdio://] [--script FILE]`` and ``app-server schema --out
DIR``: the host driven by another program over JSON-RPC 2.0 (``host.appserver``; see
docs/app-server.md). stdout carries protocol messages only; diagnostics go to stderr."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from host.app import Host
from host.errors import HostError


def add_parser(commands: Any) -> None:
    """Register ``app-server`` and its ``schema`` action."""
    server = commands.add_parser("app-server", help="serve JSON-RPC to other programs (stdio)")
    server.add_argument(
        "--listen", default="stdio://", metavar="URL", help="stdio:// (the default)"
    )
    server.add_argument(
        "--script", type=Path, metavar="FILE", help="the scripted model answers from FILE"
    )
    actions = server.add_subparsers(dest="app_server_action", metavar="ACTION")
    schema = actions.add_parser("schema", help="write the protocol's JSON Schema files")
    schema.add_argument("--out", type=Path, required=True, metavar="DIR")


def command(host: Host, args: argparse.Namespace) -> int:
    """Serve until the client leaves (exit 0), or write the schema files."""
    from host.cli import termination

    if args.app_server_action == "schema":
        from host.appserver.schema import write

        written = write(args.out)
        print(f"wrote {len(written)} schema files to {args.out}")
        return 0
    if args.listen != "stdio://":
        raise HostError("BAD_LISTEN", f"cannot listen on {args.listen!r}: use stdio://")
    return termination.run(_serve(host, args))


async def _serve(host: Host, args: argparse.Namespace) -> int:
    from host.appserver.server import AppServer
    from host.appserver.stdio import serve
    from host.cli.chat import choose_model

    choose_model(host, args.script, sys.stderr)
    server = AppServer(host)
    try:
        await serve(server, sys.stdin.buffer, sys.stdout.buffer)
    finally:
        server.close()
        await host.aclose()
    return 0
