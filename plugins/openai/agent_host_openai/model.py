"""``OpenAIModel``: the host's model protocol over an OpenAI-compatible chat-completions server.

One ``complete`` is one ``POST {base_url}/chat/completions`` (non-streaming), made with a fresh
``httpx.AsyncClient`` (so a model object is safe to share across event loops and needs no
closing; the TLS context is built once and shared). Connection errors, timeouts, 408/409/429
and 5xx answers are retried up to ``max_retries`` times with exponential backoff and jitter,
honouring ``Retry-After`` / ``retry-after-ms`` (0–60 s); 401/403 and other 4xx answers fail at
once. Every failure is one ``OpenAIModelError`` with a code and a one-line message naming the
server.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import ssl
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from agent_host_openai.convert import ResponseShapeError, parse_completion, request_body
from host.agents.models import ModelRequest, ModelResponse
from host.cancel import CancelSignal
from host.errors import HostError

Sleep = Callable[[float], Awaitable[None]]

RETRYABLE_STATUS = frozenset({408, 409, 429})
"""Statuses retried besides every 5xx."""

MAX_RETRY_AFTER = 60.0
"""A ``Retry-After`` longer than this (seconds) is ignored in favour of the backoff."""

DETAIL_LIMIT = 200
"""How much of a server's error message goes into an error's one line."""


class OpenAIModelError(HostError):
    """A failed model call. Codes:

    * ``MODEL_UNAVAILABLE`` — unreachable, timed out, 429 or 5xx after every retry;
    * ``MODEL_AUTH`` — 401/403: the API key is missing or rejected (never retried);
    * ``MODEL_REJECTED`` — any other 4xx: the server refused this request (never retried);
    * ``MODEL_BAD_RESPONSE`` — a 2xx whose body is not a chat completion;
    * ``CANCELLED`` — the call's signal was set.
    """


def display_url(base_url: str) -> str:
    """``base_url`` without a trailing slash or any user:password part (safe to show)."""
    parts = urlsplit(base_url.rstrip("/"))
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


class OpenAIModel:
    """A model served by an OpenAI-compatible ``/chat/completions`` endpoint.

    ``backoff_base`` is the first retry delay in seconds (doubling, capped at
    ``backoff_max``, plus up to 25 % jitter); ``sleep`` is awaited for every delay (tests
    inject a recorder).
    """

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff_base: float = 0.5,
        backoff_max: float = 8.0,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key or None
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self._sleep = sleep
        self._server = f"model server {display_url(self.base_url)}"
        self._ssl: ssl.SSLContext | None = None

    def __repr__(self) -> str:
        return f"OpenAIModel(base_url={display_url(self.base_url)!r}, model={self.model!r})"

    async def complete(self, request: ModelRequest, *, signal: CancelSignal) -> ModelResponse:
        """Answer ``request``; setting ``signal`` abandons the HTTP call (code ``CANCELLED``)."""
        self._raise_if_cancelled(signal)
        work = asyncio.ensure_future(self._post(request_body(self.model, request)))
        stop = asyncio.ensure_future(signal.wait())
        try:
            await asyncio.wait({work, stop}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:  # our own task was cancelled: take the request down with it
            work.cancel()
            await asyncio.wait({work})
            raise
        finally:
            stop.cancel()
        if signal.is_set():
            if not work.done():
                work.cancel()
                await asyncio.wait({work})
            elif not work.cancelled():
                work.exception()  # retrieved: the signal wins, the outcome is dropped
            self._raise_if_cancelled(signal)
        return work.result()

    def _raise_if_cancelled(self, signal: CancelSignal) -> None:
        if signal.is_set():
            raise OpenAIModelError(
                "CANCELLED", f"model request cancelled: {signal.reason or 'cancelled'}"
            )

    # -- HTTP ------------------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    async def _post(self, body: dict[str, Any]) -> ModelResponse:
        url = f"{self.base_url}/chat/completions"
        content = json.dumps(body).encode()
        attempts = self.max_retries + 1
        async with httpx.AsyncClient(timeout=self.timeout, verify=self._ssl_context()) as client:
            for attempt in range(1, attempts + 1):
                retry_after: float | None = None
                try:
                    response = await client.post(url, content=content, headers=self._headers())
                except httpx.TimeoutException:
                    failure = f"did not answer within {self.timeout:g}s"
                except httpx.ConnectError as error:
                    failure = f"is unreachable: {describe_transport_error(error)}"
                except httpx.TransportError as error:
                    failure = f"connection failed: {describe_transport_error(error)}"
                else:
                    status = response.status_code
                    if status < 300:
                        return self._parse(response)
                    if status in (401, 403):
                        raise self._auth_error(response)
                    if status not in RETRYABLE_STATUS and status < 500:
                        raise OpenAIModelError(
                            "MODEL_REJECTED",
                            f"{self._server} rejected the request ({status})"
                            + _detail_suffix(response),
                        )
                    what = "is rate limiting requests" if status == 429 else "is unavailable"
                    failure = f"{what}: HTTP {status}{_detail_suffix(response)}"
                    retry_after = parse_retry_after(response.headers)
                if attempt == attempts:
                    tried = f" (gave up after {attempts} attempts)" if attempts > 1 else ""
                    raise OpenAIModelError("MODEL_UNAVAILABLE", f"{self._server} {failure}{tried}")
                await self._sleep(self.retry_delay(attempt, retry_after))
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    def _ssl_context(self) -> ssl.SSLContext:
        """httpx's default TLS context, built once: building it costs tens of milliseconds."""
        if self._ssl is None:
            self._ssl = httpx.create_ssl_context()
        return self._ssl

    def retry_delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1-based): the server's
        ``Retry-After`` when it gave a usable one, else exponential backoff with jitter."""
        if retry_after is not None:
            return retry_after
        delay = min(self.backoff_max, self.backoff_base * 2.0 ** (attempt - 1))
        return delay + random.uniform(0, delay / 4)

    def _parse(self, response: httpx.Response) -> ModelResponse:
        try:
            return parse_completion(response.json())
        except ValueError as error:  # JSON decode errors and ResponseShapeError
            why = str(error) if isinstance(error, ResponseShapeError) else "it is not JSON"
            raise OpenAIModelError(
                "MODEL_BAD_RESPONSE", f"{self._server} sent an unreadable response: {why}"
            ) from None

    def _auth_error(self, response: httpx.Response) -> OpenAIModelError:
        status = response.status_code
        if self.api_key is None:
            message = (
                f"{self._server} requires an API key ({status}): "
                f"set {self.api_key_env} in the environment"
            )
        else:
            message = f"{self._server} rejected the API key ({status})" + _detail_suffix(response)
        return OpenAIModelError("MODEL_AUTH", message)


def parse_retry_after(headers: httpx.Headers) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date), when
    present and within 0–``MAX_RETRY_AFTER``; else None."""
    seconds: float | None = None
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            seconds = float(millis) / 1000
        except ValueError:
            seconds = None
    value = headers.get("retry-after")
    if seconds is None and value is not None:
        try:
            seconds = float(value)
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(value)
            except (TypeError, ValueError):
                return None
            seconds = when.timestamp() - time.time()
    if seconds is None or seconds != seconds or not 0 <= seconds <= MAX_RETRY_AFTER:
        return None
    return seconds


def describe_transport_error(error: BaseException) -> str:
    """A short lower-case reason for a transport failure (``connection refused``, …)."""
    seen: BaseException | None = error
    for _ in range(10):  # walk the cause chain down to the socket error
        if seen is None:
            break
        if isinstance(seen, ConnectionRefusedError):
            return "connection refused"
        if isinstance(seen, ConnectionResetError):
            return "connection reset"
        if isinstance(seen, OSError) and seen.errno is not None and seen.strerror:
            return seen.strerror[:1].lower() + seen.strerror[1:]
        seen = seen.__cause__ or seen.__context__
    text = " ".join(str(error).split())
    return text[:1].lower() + text[1:] if text else type(error).__name__


def _detail_suffix(response: httpx.Response) -> str:
    detail = _server_detail(response)
    return f": {detail}" if detail else ""


def _server_detail(response: httpx.Response) -> str:
    """The server's own error message, on one line and shortened."""
    try:
        data: Any = response.json()
    except ValueError:
        data = response.text
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict):
            error = error.get("message") or error.get("detail") or ""
        elif "message" in data and not isinstance(error, str):
            error = data["message"]
        data = error if isinstance(error, str) else ""
    text = " ".join(str(data).split()) if isinstance(data, str) else ""
    if len(text) > DETAIL_LIMIT:
        text = text[: DETAIL_LIMIT - 1] + "…"
    return text
