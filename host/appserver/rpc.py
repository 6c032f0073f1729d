"""JSON-RPC 2.0 framing: reading one message, the error codes, and the messages written.

Every message written carries ``"jsonrpc": "2.0"``; one read may omit it. The standard codes
are used where they apply; the host's own failures have codes of their own, and every error
carries its stable word as ``data.code``.
"""

from __future__ import annotations

import json
from typing import Any

import attrs

MAX_MESSAGE_BYTES = 8 * 1024 * 1024
"""The largest message read (8 MiB); a longer one is an invalid request."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
NOT_INITIALIZED = -32002
HOST_ERROR = -32000

OWN_CODES = {
    "NOT_INITIALIZED": NOT_INITIALIZED,
    "UNKNOWN_THREAD": -32010,
    "NOT_LIVE": -32011,
    "NOT_A_ROOT": -32012,
    "LOCKED": -32013,
    "UNAUTHORIZED": -32014,
    "UNAVAILABLE": -32015,
    "UNKNOWN_MODEL": -32016,
    "OVERLOADED": -32017,
    "UNKNOWN_PROFILE": -32018,
    "AMBIGUOUS_PROFILE": -32019,
    "MCP_SERVER_NOT_CONNECTED": -32020,
    "INVALID_INPUT": INVALID_PARAMS,
    "INVALID_CURSOR": INVALID_PARAMS,
    "INVALID_SESSION_ID": INVALID_PARAMS,
}
"""The host's failures with a code of their own; any other is ``HOST_ERROR``."""


@attrs.define
class RpcError(Exception):
    """A JSON-RPC error to answer with: a code, one line and the stable word; ``request_id``
    is the id of the message it answers when that could be read before the error."""

    code: int
    message: str
    word: str
    request_id: Any = None

    @classmethod
    def of(cls, word: str, message: str) -> RpcError:
        """The error for a host failure's code word."""
        return cls(OWN_CODES.get(word, HOST_ERROR), message, word)

    def response(self, request_id: Any) -> dict[str, Any]:
        """The error response to ``request_id``."""
        error = {"code": self.code, "message": self.message, "data": {"code": self.word}}
        return {"jsonrpc": "2.0", "id": request_id, "error": error}


TOO_LARGE = RpcError(INVALID_REQUEST, "message too large (over 8 MiB)", "TOO_LARGE")


@attrs.frozen
class Message:
    """One message read: a request (``id`` and ``method``), a notification (``method``, no
    ``id``) or a response to the server's request (``id`` with ``result`` or ``error``)."""

    id: Any
    method: str | None
    params: Any
    result: Any
    error: Any
    has_id: bool


def parse(text: str | bytes) -> Message:
    """The message ``text`` holds; ``RpcError`` (parse error or invalid request) else."""
    size = len(text.encode("utf-8", "surrogatepass")) if isinstance(text, str) else len(text)
    if size > MAX_MESSAGE_BYTES:
        raise TOO_LARGE
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError) as error:
        raise RpcError(PARSE_ERROR, f"parse error: {error}", "PARSE_ERROR") from None
    if not isinstance(data, dict):
        raise RpcError(INVALID_REQUEST, "a message must be a JSON object", "INVALID_REQUEST")
    if data.get("jsonrpc", "2.0") != "2.0":
        raise RpcError(INVALID_REQUEST, 'jsonrpc must be "2.0"', "INVALID_REQUEST")
    request_id = data.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, str | int | float | None):
        raise RpcError(INVALID_REQUEST, "id must be a string or a number", "INVALID_REQUEST")
    method = data.get("method")
    if method is not None and not isinstance(method, str):
        raise RpcError(INVALID_REQUEST, "method must be a string", "INVALID_REQUEST")
    if method is None and not ("result" in data or "error" in data):
        raise RpcError(INVALID_REQUEST, "a message needs a method or a result", "INVALID_REQUEST")
    params = data.get("params", {})
    if method is not None and not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "params must be an object", "INVALID_PARAMS", request_id)
    return Message(
        request_id, method, params, data.get("result"), data.get("error"), "id" in data
    )


def result(request_id: Any, value: Any) -> dict[str, Any]:
    """A success response."""
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def notification(method: str, params: Any) -> dict[str, Any]:
    """A notification."""
    return {"jsonrpc": "2.0", "method": method, "params": params}


def request(request_id: str, method: str, params: Any) -> dict[str, Any]:
    """A request from the server."""
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
