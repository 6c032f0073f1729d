"""A real OpenAI-compatible HTTP server on loopback for tests: scripted replies, recorded requests.

Shipped with the plugin so deployments and plugin authors can test against it keylessly. Like a
real server it refuses malformed chat-completions bodies (``validate_chat``), keeps connections
alive (``FakeServer.connections`` counts them) and can stream server-sent events (``Stream``,
built with ``stream_chunks``).
"""

from __future__ import annotations

import contextlib
import json
import re
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

ENV_VARS = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "AGENT_HOST_MODEL", "MY_KEY")

REJECT_STATUS = 500
"""The status answered to a body ``validate_chat`` refuses (llama-cpp-python's server answers
500 to these, with the request-validation errors as the message)."""

WAIT_STEP = 0.05
"""The longest single sleep of a delay or a pace: a stop or a departed client is seen soon."""

ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
"""The message roles a chat-completions body may use."""

_MISSING = object()


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


def rejection_body(message: str) -> dict[str, Any]:
    """The JSON body answered with ``REJECT_STATUS`` to a body ``validate_chat`` refuses, in
    the shape llama-cpp-python's server sends (``"N validation errors: …"``)."""
    return {
        "error": {
            "message": f"1 validation error:\n  {message}",
            "type": "internal_server_error",
            "param": None,
            "code": None,
        }
    }


def validate_chat(body: Any) -> str | None:
    """Why a strict server refuses this ``POST /chat/completions`` body, or None if it is fine.

    Every message needs a known role and string ``content`` — an assistant message with
    ``tool_calls`` too (llama.cpp fails on a null one); a ``tool`` message's ``tool_call_id``
    must name a tool call of an earlier assistant message. ``tools`` without ``tool_choice``
    pass (llama.cpp then treats the choice as ``none``).
    """
    if not isinstance(body, dict):
        return "the body is not a JSON object"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: expected a non-empty list"
    call_ids: set[str] = set()
    for index, message in enumerate(messages):
        problem = _message_problem(message, call_ids)
        if problem is not None:
            return f"messages[{index}]{problem}"
    return None


def _message_problem(message: Any, call_ids: set[str]) -> str | None:
    """What is wrong with one message (the text after ``messages[i]``); adds its call ids."""
    if not isinstance(message, dict):
        return ": expected an object"
    role = message.get("role")
    if role not in ROLES:
        return f".role: unknown role {json.dumps(role)}"
    content = message.get("content", _MISSING)
    calls = message.get("tool_calls")
    if role == "assistant" and calls is not None:
        problem = _tool_calls_problem(calls, call_ids)
        if problem is not None:
            return problem
        if not isinstance(content, str):
            return f".content: {_kind(content)} in an assistant message with tool_calls"
    if not isinstance(content, str):
        return f".content: expected a string, got {_kind(content)}"
    if role == "tool":
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str) or call_id not in call_ids:
            return f".tool_call_id: {json.dumps(call_id)} answers no earlier assistant tool call"
    return None


def _tool_calls_problem(calls: Any, call_ids: set[str]) -> str | None:
    """What is wrong with an assistant's ``tool_calls``; adds their ids to ``call_ids``."""
    if not isinstance(calls, list) or not calls:
        return ".tool_calls: expected a non-empty list"
    for index, call in enumerate(calls):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(call.get("id"), str):
            return f".tool_calls[{index}]: expected an object with an id and a function"
        if not isinstance(function.get("name"), str):
            return f".tool_calls[{index}].function.name: expected a string"
        if not isinstance(function.get("arguments"), str):
            return f".tool_calls[{index}].function.arguments: expected a JSON string"
        call_ids.add(call["id"])
    return None


def _kind(value: Any) -> str:
    """How a validation message names a value that is not a string."""
    if value is _MISSING:
        return "missing"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "a list" if isinstance(value, list) else "an object"


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


def stream_chunks(
    text: str = "",
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: str | None = "stop",
    usage: dict[str, int] | None = None,
    pieces: int | None = None,
) -> list[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects OpenAI and llama.cpp stream for one answer.

    The role first (with empty content), then ``text`` in ``pieces`` parts (by default one per
    word, each with the white space before it), then each tool call (``tool_call`` entries):
    its id and name, then its arguments in up to three fragments; then an empty delta with
    ``finish_reason``; then, when ``usage`` is given, a chunk with no choices and the usage.
    """
    chunks = [_chunk({"role": "assistant", "content": ""})]
    chunks.extend(_chunk({"content": part}) for part in _split_text(text, pieces))
    for index, call in enumerate(tool_calls or ()):
        function = call["function"]
        opening = {"name": function["name"], "arguments": ""}
        first = {"index": index, "id": call["id"], "type": "function", "function": opening}
        chunks.append(_chunk({"tool_calls": [first]}))
        chunks.extend(
            _chunk({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]})
            for fragment in _split_even(function["arguments"], 3)
        )
    chunks.append(_chunk({}, finish_reason))
    if usage is not None:
        chunks.append({**_chunk({}), "choices": [], "usage": usage})
    return chunks


def text_tokens(count: int) -> str:
    """A reply text of ``count`` words (``stream_chunks`` streams one word per chunk)."""
    return " ".join(f"w{index}" for index in range(count))


def sse(chunk: dict[str, Any]) -> str:
    """One server-sent event carrying ``chunk`` as JSON: ``data: <json>\\n\\n``."""
    return f"data: {json.dumps(chunk)}\n\n"


def _chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "test-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def _split_text(text: str, pieces: int | None) -> list[str]:
    """``text`` in ``pieces`` near-equal parts, or one part per word with its leading space."""
    if pieces is not None:
        return _split_even(text, pieces)
    return re.findall(r"\s*\S+|\s+$", text)


def _split_even(text: str, pieces: int) -> list[str]:
    """``text`` cut into at most ``pieces`` non-empty parts of near-equal length."""
    size = -(-len(text) // max(pieces, 1))
    return [text[start : start + size] for start in range(0, len(text), size)] if text else []


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
    (a server-side context holding a certificate for 127.0.0.1) it speaks HTTPS.
    """

    def __init__(self, *, strict: bool = True, tls: ssl.SSLContext | None = None) -> None:
        self.strict = strict
        self.scheme = "https" if tls else "http"
        self.replies: deque[Reply | Stream] = deque()
        self.requests: list[Recorded] = []
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
