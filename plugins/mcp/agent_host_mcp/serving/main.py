"""Running ``mcp serve``: open the root, then serve one client over stdio (until it closes
stdin) or clients over streamable HTTP on loopback (until interrupted); then close the host
as ``/exit`` does (running turns end interrupted; the root and its subagents stay stored).

Over HTTP every request presents the bearer token in
``$AGENT_HOST_HOME/mcp-serve-<port>.token`` (random per start, mode 0600, the path printed
once to stderr, removed on a clean close); the SDK's DNS-rebinding protection refuses other
``Host`` and ``Origin`` headers.
"""

from __future__ import annotations

import hmac
import os
import secrets
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_host_mcp.serving.root import open_root, root_id
from agent_host_mcp.serving.server import Served
from host.api import HostError, replace_file

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

    from host.api import RunningHost

TOKEN_FILE = "mcp-serve-{port}.token"
LOOPBACK = "127.0.0.1"


async def serve(
    host: RunningHost, *, root: str | None, port: int | None, ready: Callable[[], None]
) -> int:
    """Serve the root ``root`` (None: this directory's) over stdio, or HTTP on ``port``;
    ``ready`` is called once the root is open (and the port bound)."""
    try:
        agent = await open_root(host, root_id(root, Path.cwd()))
        listening = _bind(port) if port is not None else None
    except BaseException:
        await host.aclose()
        raise
    ready()
    served = Served(host, agent)
    try:
        await served.start()
        if listening is None:
            await _stdio(served)
        else:
            await _http(served, listening)
    finally:
        served.close()
        await host.aclose()
    return 0


async def _stdio(served: Served) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await served.server.run(read, write, served.options())


def _bind(port: int) -> socket.socket:
    """The loopback socket to serve on; ``BAD_LISTEN`` when the port cannot be had."""
    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listening.bind((LOOPBACK, port))
    except OSError as error:
        listening.close()
        reason = error.strerror or error
        raise HostError("BAD_LISTEN", f"cannot listen on {LOOPBACK}:{port}: {reason}") from None
    return listening


async def _http(served: Served, listening: socket.socket) -> None:
    import uvicorn

    from host.api import user_config_file

    token = secrets.token_urlsafe(32)
    port = listening.getsockname()[1]
    path = user_config_file(os.environ).parent / TOKEN_FILE.format(port=port)
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_file(path, token.encode() + b"\n", 0o600, sync=True)
    app = served.server.streamable_http_app(host=LOOPBACK)
    config = uvicorn.Config(Bearer(app, token), log_level="warning", lifespan="on")
    print(f"agent-host: serving MCP on http://{LOOPBACK}:{port}/mcp (token in {path})",
          file=sys.stderr, flush=True)
    try:
        await uvicorn.Server(config).serve(sockets=[listening])
    finally:
        path.unlink(missing_ok=True)


class Bearer:
    """Refuses (401) an HTTP request without ``Authorization: Bearer <token>``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self._app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass an authorized request on; answer any other with 401."""
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                await _refuse(send)
                return
        await self._app(scope, receive, send)


async def _refuse(send: Any) -> None:
    body = b"missing or wrong bearer token\n"
    headers = [(b"content-type", b"text/plain"), (b"www-authenticate", b"Bearer")]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})
