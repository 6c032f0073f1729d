"""``agent-host app-server [--listen stdio:// | ws://HOST:PORT] [--allow-remote] [--web]
[--script FILE]`` and ``app-server schema --out DIR``: the host driven by other programs over
JSON-RPC 2.0 (``host.appserver``; see docs/app-server.md); ``--web`` also serves the web
console on the ``ws://`` port. stdout carries protocol messages only (on
stdio); diagnostics go to stderr. Only ``ws://`` imports the WebSocket library."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from host.app import Host
from host.errors import HostError


def add_parser(commands: Any) -> None:
    """Register ``app-server`` and its ``schema`` action."""
    server = commands.add_parser("app-server", help="serve JSON-RPC to other programs")
    server.add_argument(
        "--listen", default="stdio://", metavar="URL",
        help="stdio:// (the default) or ws://127.0.0.1:PORT",
    )
    server.add_argument(
        "--allow-remote", action="store_true", help="let ws:// bind to a non-loopback address"
    )
    server.add_argument(
        "--script", type=Path, metavar="FILE", help="the scripted model answers from FILE"
    )
    server.add_argument(
        "--web", action="store_true",
        help="with ws://, also serve the web console at http://HOST:PORT/",
    )
    actions = server.add_subparsers(dest="app_server_action", metavar="ACTION")
    schema = actions.add_parser("schema", help="write the protocol's JSON Schema files")
    schema.add_argument(
        "--out", type=Path, required=True, metavar="DIR", help="the directory to write them to"
    )


def command(host: Host, args: argparse.Namespace) -> int:
    """Serve until the client leaves (exit 0), or write the schema files."""
    from host.cli import termination

    if args.app_server_action == "schema":
        from host.appserver.schema import write

        written = write(args.out)
        print(f"wrote {len(written)} schema files to {args.out}")
        return 0
    where = None
    if args.web and not args.listen.startswith("ws://"):
        raise HostError("BAD_LISTEN", "--web needs --listen ws://HOST:PORT")
    if args.listen != "stdio://":
        if not args.listen.startswith("ws://"):
            raise HostError(
                "BAD_LISTEN", f"cannot listen on {args.listen!r}: use stdio:// or ws://HOST:PORT"
            )
        from host.appserver.websocket import address

        where = address(args.listen, args.allow_remote)
    return termination.run(_serve(host, args, where))


async def _serve(host: Host, args: argparse.Namespace, where: tuple[list[str], int] | None) -> int:
    from host.appserver.server import AppServer
    from host.cli.chat import choose_model

    choose_model(host, args.script, sys.stderr)
    server = AppServer(host)
    try:
        if where is None:
            from host.appserver.stdio import serve

            protocol, sys.stdout = sys.stdout, sys.stderr  # anything else printed: stderr
            try:
                await serve(server, sys.stdin.buffer, protocol.buffer)
            finally:
                sys.stdout = protocol
        else:
            from host.approvals.policy import user_config_file
            from host.appserver.websocket import serve_websocket

            home = user_config_file(os.environ).parent
            await serve_websocket(server, *where, home, web=args.web)
    finally:
        server.close()
        await host.aclose()
    return 0
