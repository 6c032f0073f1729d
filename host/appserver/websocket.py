"""The WebSocket transport: one JSON-RPC message per text frame, several clients at once.

It binds to loopback unless ``--allow-remote`` says otherwise. Every connection presents the
bearer token, random per start and written to ``$AGENT_HOST_HOME/app-server.token`` (mode
0600; printed once to stderr): in the ``Authorization: Bearer`` header or, from a browser,
which cannot set headers on a WebSocket, as the subprotocol ``agent-host.token.<token>``
offered beside ``agent-host.v1`` (the server answers ``agent-host.v1``; the token is never
echoed or logged). A browser ``Origin`` that is not the server's own (a bound address or
localhost, or the ``Host`` the request was sent to: the console's page) is refused. ``GET
/readyz`` and ``/healthz`` answer ``ok`` without a token and reveal nothing else. With ``--web``
a plain ``GET`` (no upgrade) gets the web console's files (``host.appserver.pages``) and the
console's URL is printed once, the token in its fragment. Only this command imports the
``websockets`` library.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import secrets
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from websockets.asyncio.server import ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response
from websockets.typing import Subprotocol

from host.appserver import rpc
from host.appserver.connection import TOO_SLOW, Connection
from host.appserver.pages import Pages
from host.atomic import replace_file
from host.errors import HostError

if TYPE_CHECKING:
    from host.appserver.server import AppServer

SUBPROTOCOL = "agent-host.v1"
TOKEN_PREFIX = "agent-host.token."
TOKEN_FILE = "app-server.token"
PROBES = ("/readyz", "/healthz")
MAX_FRAME = 2 * rpc.MAX_MESSAGE_BYTES
"""Frames up to this size are read (those over ``MAX_MESSAGE_BYTES`` get a JSON-RPC error);
a larger one closes the connection (1009, message too big)."""


class ListenError(HostError):
    """A ``--listen`` address that cannot be used."""

    def __init__(self, message: str) -> None:
        super().__init__("BAD_LISTEN", message)


def address(url: str, allow_remote: bool) -> tuple[list[str], int]:
    """The addresses ``ws://HOST:PORT`` binds (HOST resolved; with port 0 only the first, so
    that the one port printed is the only one listening) and the port; a HOST with any
    address not loopback needs ``allow_remote``."""
    parts = urlsplit(url)
    if parts.scheme != "ws" or not parts.hostname or parts.path not in ("", "/"):
        raise ListenError(f"cannot listen on {url!r}: use stdio:// or ws://HOST:PORT")
    try:
        port = parts.port
    except ValueError:
        raise ListenError(f"cannot listen on {url!r}: bad port") from None
    if port is None:
        raise ListenError(f"cannot listen on {url!r}: name a port (0 picks a free one)")
    hosts = _resolve(parts.hostname, port)
    if not allow_remote and not (hosts and all(ipaddress.ip_address(h).is_loopback for h in hosts)):
        raise ListenError(
            f"refusing to listen on {parts.hostname} (not loopback) without --allow-remote"
        )
    if not hosts:
        raise ListenError(f"cannot listen on {url!r}: {parts.hostname} does not resolve")
    return hosts[:1] if port == 0 else hosts, port


def _resolve(host: str, port: int) -> list[str]:
    """The addresses ``host`` names, in the resolver's order (none when it does not resolve)."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    return list(dict.fromkeys(str(info[4][0]) for info in found))


def write_token(home: Path) -> tuple[str, Path]:
    """A fresh random token, written to ``home/app-server.token``: a new file of mode 0600
    renamed into place (a link at that path is replaced, never written through); ``home`` is
    created with mode 0700 when missing."""
    token = secrets.token_urlsafe(32)
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = home / TOKEN_FILE
    replace_file(path, token.encode() + b"\n", 0o600, sync=True)
    return token, path


class Gate:
    """Who may open a connection: the token, and a browser only from the server's own Origin."""

    def __init__(self, token: str, pages: Pages | None = None) -> None:
        """``pages``: the web console's files, answered to plain ``GET`` requests."""
        self.token = token
        self.pages = pages
        self.origins: set[str] = set()

    def check(self, connection: ServerConnection, request: Request) -> Response | None:
        """``websockets``' ``process_request``: probes and pages answered, strangers refused."""
        if request.path in PROBES:
            return connection.respond(200, "ok\n")
        if self.pages is not None and (page := self.pages.answer(request)) is not None:
            return page
        origin = request.headers.get("Origin")
        if origin is not None and origin not in self.origins and not _sent_to(origin, request):
            return connection.respond(403, "forbidden origin\n")
        if not self._authorized(request.headers):
            return connection.respond(401, "a valid token is required\n")
        if not _protocol_offered(request.headers):
            return connection.respond(400, f"offer {SUBPROTOCOL} beside the token\n")
        return None

    def _authorized(self, headers: Headers) -> bool:
        scheme, _, credentials = headers.get("Authorization", "").strip().partition(" ")
        if scheme.lower() == "bearer" and _same(credentials.strip(), self.token):
            return True
        return any(_same(item, TOKEN_PREFIX + self.token) for item in _offered(headers))


def _sent_to(origin: str, request: Request) -> bool:
    """Whether ``origin`` is the address the request was sent to (a page this server served,
    opened at whatever name or address reaches it, ``--allow-remote``)."""
    host = request.headers.get("Host")
    return host is not None and origin.lower() == f"http://{host.strip().lower()}"


def _offered(headers: Headers) -> list[str]:
    """The subprotocols a client offered."""
    return [item.strip() for item in ",".join(headers.get_all("Sec-WebSocket-Protocol")).split(",")]


def _protocol_offered(headers: Headers) -> bool:
    """A client that offers subprotocols (a browser sending the token as one) offers ours too:
    a browser drops a connection whose answer names none of the protocols it offered."""
    offered = [item for item in _offered(headers) if item]
    return not offered or SUBPROTOCOL in offered


def _same(given: str, wanted: str) -> bool:
    """``given`` (a header value, any characters) is ``wanted``, compared in constant time as
    bytes (a str comparison refuses non-ASCII text)."""
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), wanted.encode())


def select(connection: ServerConnection, offered: Sequence[Subprotocol]) -> Subprotocol | None:
    """Answer ``agent-host.v1`` when offered (never the token)."""
    return Subprotocol(SUBPROTOCOL) if SUBPROTOCOL in offered else None


async def serve_websocket(
    server: AppServer, hosts: list[str], port: int, home: Path, web: bool = False
) -> None:
    """Serve clients on ``hosts`` at ``port`` until cancelled (SIGTERM, Ctrl-C); with ``web``
    the console's pages too."""
    token, path = write_token(home)
    gate = Gate(token, Pages() if web else None)

    async def handle(socket: ServerConnection) -> None:
        await _connection(server, socket)

    async with serve(
        handle,
        hosts,  # type: ignore[arg-type]  # loop.create_server binds each of a sequence
        port,
        process_request=gate.check,
        select_subprotocol=select,
        max_size=MAX_FRAME,
        compression=None,  # no per-message deflate: each small frame would pay for zlib
        server_header=None,
    ) as listening:
        bound = [_shown(s.getsockname()[0]) for s in listening.sockets]
        port = listening.sockets[0].getsockname()[1]
        gate.origins = {f"http://{host}:{port}" for host in [*bound, "localhost"]}
        if not web:  # with the console, its URL is the one line that carries the token
            print(f"agent-host: app-server token (also in {path}): {token}", file=sys.stderr)
        print(f"agent-host: app-server listening on ws://{bound[0]}:{port}", file=sys.stderr)
        if web:
            console = f"http://{bound[0]}:{port}/#token={token}"
            print(f"agent-host: web console: {console} (token also in {path})", file=sys.stderr)
        sys.stderr.flush()
        await asyncio.Future()  # until cancelled


def _shown(host: str) -> str:
    """``host`` as a URL names it (an IPv6 address in brackets)."""
    return f"[{host}]" if ":" in host else host


async def _connection(server: AppServer, socket: ServerConnection) -> None:
    """One client: frames in, messages out, until it closes."""
    loop = asyncio.get_running_loop()
    closing: list[asyncio.Task[None]] = []

    def hangup() -> None:  # the writer may wait on the socket: close it from here
        closing.append(loop.create_task(socket.close(1008, TOO_SLOW)))

    connection = Connection(server, hangup)
    server.connect(connection)

    async def write() -> None:
        while None not in (batch := await connection.take()):
            for text in batch:
                assert text is not None
                try:
                    await socket.send(text.decode())  # a text frame
                except ConnectionClosed:
                    return

    writer = loop.create_task(write())
    try:
        async for frame in socket:
            connection.receive(frame)
    except ConnectionClosed:
        pass
    finally:
        connection.close()
        writer.cancel()
        await asyncio.gather(writer, *closing, return_exceptions=True)
