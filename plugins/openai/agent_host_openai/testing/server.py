"""``FakeServer``: a real HTTP/1.1 server on loopback answering scripted replies and streams."""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
import sys
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agent_host_openai.testing.bodies import sse
from agent_host_openai.testing.strict import REJECT_STATUS, rejection_body, validate_chat

ENV_VARS = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "AGENT_HOST_MODEL", "MY_KEY")
"""The environment variables a test of the plugin clears first."""

WAIT_STEP = 0.05
"""The longest single sleep of a delay or a pace: a stop or a departed client is seen soon."""


@dataclass
class Reply:
    """One scripted answer: status, JSON (dict/list) or raw (str) body, headers, delay."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Stream:
    """One scripted server-sent-event answer, sent with chunked transfer encoding.

    A dict chunk goes out as ``data: <json>\\n\\n``, a str chunk as it is (for malformed SSE;
    an empty one is skipped, as HTTP cannot send an empty chunk); ``pace`` seconds pass between
    chunks; ``data: [DONE]\\n\\n`` follows when ``done``; ``cut`` then closes the connection
    without the terminating zero-length HTTP chunk.
    """

    chunks: Sequence[dict[str, Any] | str]
    pace: float = 0.0
    done: bool = True
    cut: bool = False
    status: int = 200


@dataclass
class Recorded:
    """One request the server received.

    ``rejected`` is why ``validate_chat`` refused it (then no scripted reply was used);
    ``client_gone`` is set when the client hung up before the answer was complete;
    ``finished`` is set once the server is done with the request.
    """

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    rejected: str | None = None
    client_gone: bool = False
    finished: threading.Event = field(default_factory=threading.Event, compare=False, repr=False)


class _LoopbackServer(ThreadingHTTPServer):
    """A threading HTTP server that counts the connections it accepts and can close them all."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.connections = 0
        self.open: set[socket.socket] = set()
        self.lock = threading.Lock()

    def get_request(self) -> tuple[socket.socket, Any]:
        connection, address = super().get_request()
        with self.lock:
            self.connections += 1
            self.open.add(connection)
        return connection, address

    def shutdown_request(self, request: Any) -> None:
        with self.lock:
            self.open.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that drops an idle keep-alive connection is no error worth printing."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    def hang_up(self) -> None:
        """Close every open connection, so idle keep-alive handlers end too."""
        with self.lock:
            connections = list(self.open)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)


class FakeServer:
    """Answers ``POST`` requests with the scripted replies, in order; records every request.

    With ``strict`` (the default) a ``…/chat/completions`` body ``validate_chat`` refuses is
    answered ``REJECT_STATUS`` with ``rejection_body`` and uses no scripted reply. With ``tls``
    (a server-side context holding a certificate for 127.0.0.1) it speaks HTTPS. ``GET
    …/models`` lists ``models`` (404 while it is None); it is not recorded.
    """

    def __init__(self, *, strict: bool = True, tls: ssl.SSLContext | None = None) -> None:
        self.strict = strict
        self.scheme = "https" if tls else "http"
        self.replies: deque[Reply | Stream] = deque()
        self.requests: list[Recorded] = []
        self.models: list[str] | None = None
        self.stopping = threading.Event()
        self._http = _LoopbackServer(self._handler())
        if tls is not None:
            self._http.socket = tls.wrap_socket(self._http.socket, server_side=True)
        self._thread = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def root(self) -> str:
        """The server's origin, ``http://127.0.0.1:<port>`` (``https`` with ``tls``)."""
        return f"{self.scheme}://127.0.0.1:{self._http.server_address[1]}"

    @property
    def url(self) -> str:
        """The base URL a client configures (``…/v1``)."""
        return f"{self.root}/v1"

    @property
    def connections(self) -> int:
        """How many TCP connections the server has accepted."""
        return self._http.connections

    @property
    def open_connections(self) -> int:
        """How many accepted connections are still open (a client's pool keeps them)."""
        with self._http.lock:
            return len(self._http.open)

    def reply(self, *replies: Reply | Stream | dict[str, Any]) -> None:
        """Queue replies; a dict is a 200 with that JSON body."""
        for reply in replies:
            self.replies.append(reply if isinstance(reply, Reply | Stream) else Reply(body=reply))

    def bodies(self) -> list[Any]:
        """The body of every recorded request, in order."""
        return [request.body for request in self.requests]

    def start(self) -> None:
        """Serve on a daemon thread."""
        self._thread.start()

    def stop(self) -> None:
        """Stop serving, end pending delays and streams, and close every connection."""
        self.stopping.set()
        self._http.shutdown()
        self._http.hang_up()
        self._http.server_close()

    def _next_reply(self, recorded: Recorded) -> Reply | Stream:
        """The answer to ``recorded``: a rejection, the next scripted reply, or an error."""
        if self.strict and recorded.path.endswith("/chat/completions"):
            recorded.rejected = validate_chat(recorded.body)
            if recorded.rejected is not None:
                return Reply(REJECT_STATUS, rejection_body(recorded.rejected))
        if self.replies:
            return self.replies.popleft()
        return Reply(500, {"error": {"message": "no scripted reply left"}})

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body leave at once: no 40 ms stalls

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode(errors="replace")
                headers = {k.lower(): v for k, v in self.headers.items()}
                recorded = Recorded("POST", self.path, headers, body)
                server.requests.append(recorded)
                reply = server._next_reply(recorded)
                try:
                    if isinstance(reply, Stream):
                        whole = self.stream(reply, recorded)
                    else:
                        whole = self.send(reply, recorded)
                except OSError:  # the client gave up (timeout, cancellation)
                    recorded.client_gone, whole = True, False
                finally:
                    recorded.finished.set()
                if not whole:  # the answer is incomplete: this connection cannot carry more
                    self.close_connection = True

            def do_GET(self) -> None:
                listed = server.models
                if self.path.endswith("/models") and listed is not None:
                    data = [{"id": name, "object": "model"} for name in listed]
                    reply = Reply(body={"object": "list", "data": data})
                else:
                    reply = Reply(404, {"error": {"message": f"no route {self.path}"}})
                self.send(reply, Recorded("GET", self.path, {}, None))

            def send(self, reply: Reply, recorded: Recorded) -> bool:
                """Answer ``reply`` after its delay; False if the delay was interrupted."""
                if not self.wait(reply.delay, recorded):
                    return False
                if isinstance(reply.body, str):
                    payload, kind = reply.body.encode(), "text/plain"
                else:
                    payload, kind = json.dumps(reply.body).encode(), "application/json"
                self.send_response(reply.status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
                return True

            def stream(self, reply: Stream, recorded: Recorded) -> bool:
                """Send ``reply`` as server-sent events; False if cut or interrupted."""
                self.send_response(reply.status)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for index, chunk in enumerate(reply.chunks):
                    if index and not self.wait(reply.pace, recorded):
                        return False
                    self.send_chunk(chunk if isinstance(chunk, str) else sse(chunk))
                if reply.done:
                    self.send_chunk("data: [DONE]\n\n")
                if reply.cut:
                    return False
                self.wfile.write(b"0\r\n\r\n")
                return True

            def send_chunk(self, text: str) -> None:
                """One HTTP chunk (none for empty text: that would end the body)."""
                data = text.encode()
                if data:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

            def wait(self, seconds: float, recorded: Recorded) -> bool:
                """Sleep ``seconds`` in small steps; False if the server stopped meanwhile
                or the client hung up (then ``recorded.client_gone`` is set)."""
                deadline = time.monotonic() + seconds
                while (left := deadline - time.monotonic()) > 0:
                    if server.stopping.is_set():
                        return False
                    if self.hung_up(min(left, WAIT_STEP)):
                        recorded.client_gone = True
                        return False
                return not server.stopping.is_set()

            def hung_up(self, seconds: float) -> bool:
                """Wait up to ``seconds`` for the client to close its end; True if it did."""
                self.connection.settimeout(seconds)
                try:
                    return bool(self.connection.recv(1, socket.MSG_PEEK) == b"")
                except TimeoutError:
                    return False
                except OSError:
                    return True
                finally:
                    self.connection.settimeout(None)

        return Handler


class Sleeps:
    """An injectable ``sleep`` that records its delays and does not wait."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
