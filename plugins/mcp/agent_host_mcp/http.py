"""A streamable-HTTP server's transport: the SDK's ``streamable_http_client`` over an HTTP
client of our own (the SDK's documented way to give headers), whose requests are watched so
that a server that went away is noticed at the first failed request or broken event stream —
the SDK's own retries of its event stream included — and the reconnection schedule after it.

This module imports the SDK; import it only when a server is configured.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack
from typing import Any

import httpx2
from mcp.client.streamable_http import streamable_http_client

from agent_host_mcp.session import ConnectionSpec, McpError

CONNECT_TIMEOUT = 30.0
"""Seconds to connect, write, or wait for a pooled connection (the SDK's default)."""

READ_TIMEOUT = 300.0
"""Seconds a response stream may stay silent (the SDK's default: events may be rare)."""

RECONNECT_FIRST = 0.5
"""Seconds before the first reconnection attempt after a transport failure."""

RECONNECT_CAP = 30.0
"""The longest wait between two reconnection attempts (the wait doubles up to it)."""


LOG_INTERVAL = 60.0
"""Seconds during which the SDK's transport logs one line per cause at most."""


class QuietSdkLog(logging.Filter):
    """On the SDK's streamable-HTTP logger: each cause (a message up to its first colon) is
    let through once per ``LOG_INTERVAL`` — a server that flaps does not print a line each
    time — and without its traceback unless ``--debug`` is on (the ``host`` logger at
    DEBUG)."""

    def __init__(self) -> None:
        super().__init__()
        self._last: dict[str, float] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        """Whether ``record`` goes out (its traceback dropped without ``--debug``)."""
        cause = record.getMessage().split(":", 1)[0][:80]
        now = time.monotonic()
        if now - self._last.get(cause, -LOG_INTERVAL) < LOG_INTERVAL:
            return False
        if len(self._last) > 100:  # causes are few; a server inventing new ones is bounded
            self._last.clear()
        self._last[cause] = now
        if not logging.getLogger("host").isEnabledFor(logging.DEBUG):
            record.exc_info, record.exc_text = None, None
        return True


_SDK_LOG = logging.getLogger("mcp.client.streamable_http")
if not any(isinstance(f, QuietSdkLog) for f in _SDK_LOG.filters):
    _SDK_LOG.addFilter(QuietSdkLog())


class WatchedStream(httpx2.AsyncByteStream):
    """A response body that reports a transport error met while it is read — the server
    dying under an open event stream — then raises it as it was."""

    def __init__(
        self, inner: httpx2.AsyncByteStream, on_failure: Callable[[BaseException], None]
    ) -> None:
        self._inner = inner
        self._on_failure = on_failure

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for part in self._inner:
                yield part
        except httpx2.TransportError as error:
            self._on_failure(error)
            raise

    async def aclose(self) -> None:
        """Close the body."""
        await self._inner.aclose()


class WatchedTransport(httpx2.AsyncBaseTransport):
    """An HTTP transport that reports each request that failed to reach the server, or whose
    response body broke off while it was read."""

    def __init__(self, on_failure: Callable[[BaseException], None]) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self._on_failure = on_failure

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send ``request``; a transport error is reported, then raised as it was."""
        try:
            response = await self._inner.handle_async_request(request)
        except httpx2.TransportError as error:
            self._on_failure(error)
            raise
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        response.stream = WatchedStream(response.stream, self._on_failure)
        return response

    async def aclose(self) -> None:
        """Close the pooled connections."""
        await self._inner.aclose()


async def open_http(
    stack: AsyncExitStack, spec: ConnectionSpec, on_failure: Callable[[BaseException], None]
) -> tuple[Any, Any]:
    """Connect to ``spec.url``; its read and write streams. ``on_failure(error)`` hears of each
    request that could not reach the server."""
    if not spec.url:
        raise McpError(f'MCP server "{spec.name}" could not start: no url')
    client = httpx2.AsyncClient(
        headers=dict(spec.headers) or None,
        timeout=httpx2.Timeout(CONNECT_TIMEOUT, read=READ_TIMEOUT),
        transport=WatchedTransport(on_failure),
    )
    await stack.enter_async_context(client)
    read, write = await stack.enter_async_context(
        streamable_http_client(spec.url, http_client=client)
    )
    return read, write


class Backoff:
    """Waits between reconnection attempts: ``RECONNECT_FIRST``, doubling, at most
    ``RECONNECT_CAP``; ``reset`` after a success."""

    def __init__(self, first: float = RECONNECT_FIRST, cap: float = RECONNECT_CAP) -> None:
        self._first = first
        self._cap = cap
        self._next = first

    def next(self) -> float:
        """The wait before the next attempt (and doubles the one after)."""
        wait = self._next
        self._next = min(self._cap, self._next * 2)
        return wait

    def reset(self) -> None:
        """Start again from ``first``."""
        self._next = self._first
