"""How a failed exchange with the server becomes one line: codes, retry rules, the server's words.

``OpenAIModelError`` is the one error a model call raises. The helpers here read what the
server said (status, ``Retry-After``, its error message) and decide whether trying again can
help; they do no I/O of their own.
"""

from __future__ import annotations

import email.utils
import re
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from host.api import HostError

RETRYABLE_STATUS = frozenset({408, 409, 429})
"""Statuses retried besides every 5xx (except a 5xx that is a request-validation error)."""

MAX_RETRY_AFTER = 60.0
"""A ``Retry-After`` longer than this (seconds) is ignored in favour of the backoff."""

DETAIL_LIMIT = 200
"""How much of a server's error message goes into an error's one line."""

VALIDATION_ERROR = re.compile(r"validation error|invalid_request_error|invalid request", re.I)
"""What a 5xx body says when the server in fact refused the request itself (llama.cpp
answers malformed requests with 500): sending it again cannot succeed."""


class OpenAIModelError(HostError):
    """A failed model call. Codes:

    * ``MODEL_UNAVAILABLE`` — unreachable, timed out, 429 or 5xx after every retry;
    * ``MODEL_AUTH`` — 401/403: the API key is missing or rejected (never retried);
    * ``MODEL_REJECTED`` — any other 4xx, or a 5xx whose body is a request-validation error:
      the server refused this request (never retried);
    * ``MODEL_BAD_RESPONSE`` — a 2xx whose body (or event stream) is not a chat completion;
    * ``CANCELLED`` — the call's signal was set.
    """


def display_url(base_url: str) -> str:
    """``base_url`` without a trailing slash or any user:password part (safe to show)."""
    parts = urlsplit(base_url.rstrip("/"))
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def is_validation_error(response: httpx.Response) -> bool:
    """True for a 5xx whose body says the request itself was invalid."""
    body = response.text
    return response.status_code >= 500 and bool(VALIDATION_ERROR.search(body))


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


def detail_suffix(response: httpx.Response) -> str:
    """``": <the server's message>"``, or "" when it gave none."""
    detail = server_detail(response)
    return f": {detail}" if detail else ""


def server_detail(response: httpx.Response) -> str:
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
