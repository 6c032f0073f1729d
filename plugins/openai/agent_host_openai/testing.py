"""A real OpenAI-compatible HTTP server on loopback for tests: scripted replies, recorded requests.

Shipped with the plugin so deployments and plugin authors can test against it keylessly.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ENV_VARS = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "AGENT_HOST_MODEL", "MY_KEY")


@dataclass
class Reply:
    """One scripted answer: status, JSON (dict/list) or raw (str) body, headers, delay."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Recorded:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


def completion(
    text: str | None = "",
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: str | None = "stop",
    usage: dict[str, int] | None = None,
) -> dict[str, Any]:
    """A chat-completions response body."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
    }
    if usage is not None:
        body["usage"] = usage
    return body


def tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    """One OpenAI ``tool_calls`` entry (arguments as the raw string the server sends)."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


class FakeServer:
    """Answers ``POST`` requests with the scripted replies, in order; records every request."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[Recorded] = []
        self.stopping = threading.Event()
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}"

    @property
    def url(self) -> str:
        """The base URL a client configures (``…/v1``)."""
        return f"{self.root}/v1"

    def reply(self, *replies: Reply | dict[str, Any]) -> None:
        """Queue replies; a dict is a 200 with that JSON body."""
        for reply in replies:
            self.replies.append(reply if isinstance(reply, Reply) else Reply(body=reply))

    def bodies(self) -> list[Any]:
        return [request.body for request in self.requests]

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.stopping.set()
        self._http.shutdown()
        self._http.server_close()

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
                server.requests.append(
                    Recorded(
                        "POST",
                        self.path,
                        {k.lower(): v for k, v in self.headers.items()},
                        body,
                    )
                )
                reply = (
                    server.replies.popleft()
                    if server.replies
                    else Reply(500, {"error": {"message": "no scripted reply left"}})
                )
                deadline = time.monotonic() + reply.delay
                while time.monotonic() < deadline and not server.stopping.is_set():
                    time.sleep(0.01)
                if isinstance(reply.body, str):
                    payload, kind = reply.body.encode(), "text/plain"
                else:
                    payload, kind = json.dumps(reply.body).encode(), "application/json"
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", kind)
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:  # the client gave up (timeout, cancellation)
                    pass

        return Handler


class Sleeps:
    """An injectable ``sleep`` that records its delays and does not wait."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
