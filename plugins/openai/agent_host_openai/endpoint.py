"""``ChatEndpoint``: one OpenAI-compatible ``/chat/completions`` URL over HTTP.

It owns what a request needs below the model protocol: a pooled ``httpx.AsyncClient`` per event
loop (kept alive across calls, closed by ``aclose``), the headers, and the retries. Retries
happen only before an answer has begun: connection errors, connect timeouts, 408/409/429 and 5xx
answers are retried up to ``max_retries`` times with exponential backoff and jitter, honouring
``Retry-After`` / ``retry-after-ms`` (0–60 s). A read timeout is not retried unless
``retry_read_timeouts`` (the server may still be generating the abandoned answer, and a retry
would queue behind it); a 5xx whose body is a request-validation error, 401/403 and other 4xx
answers fail at once, each as one ``OpenAIModelError`` naming the server.
"""

from __future__ import annotations

import asyncio
import functools
import json
import random
import ssl
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from agent_host_openai.convert import ResponseShapeError, parse_completion
from agent_host_openai.failures import (
    RETRYABLE_STATUS,
    OpenAIModelError,
    describe_transport_error,
    detail_suffix,
    display_url,
    is_validation_error,
    parse_retry_after,
)
from agent_host_openai.served import served_ids
from agent_host_openai.settings import Settings
from host.api import ModelResponse

Sleep = Callable[[float], Awaitable[None]]


class ChatEndpoint:
    """``{base_url}/chat/completions`` with its key, timeouts and retry policy (``settings``).

    ``backoff_base`` is the first retry delay in seconds (doubling, capped at ``backoff_max``,
    plus up to 25 % jitter); ``sleep`` is awaited for every delay (tests inject a recorder).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        api_key: str | None,
        backoff_base: float,
        backoff_max: float,
        sleep: Sleep,
    ) -> None:
        if settings.base_url is None:
            raise ValueError("a chat endpoint needs a base_url")
        self.settings = settings
        self.base_url = settings.base_url.rstrip("/")
        self.api_key = api_key or None
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self._sleep = sleep
        self.server = f"model server {display_url(self.base_url)}"
        """How failures name the server: ``model server http://host:port/v1``."""
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient]
        self._clients = weakref.WeakKeyDictionary()

    def client(self) -> httpx.AsyncClient:
        """The pooled client of the running event loop (made on first use)."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None or client.is_closed:
            client = httpx.AsyncClient(timeout=self.settings.timeout, verify=_ssl_context())
            self._clients[loop] = client
        return client

    def headers(self, *, stream: bool) -> dict[str, str]:
        """The request headers, with the key when there is one."""
        accept = "text/event-stream" if stream else "application/json"
        headers = {"Content-Type": "application/json", "Accept": accept}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    async def served_ids(self) -> list[str] | None:
        """The model ids the server's ``/models`` lists; None when it cannot say."""
        return await served_ids(self.client(), self.base_url, self.headers(stream=False))

    async def aclose(self) -> None:
        """Close the connection pool of the running event loop; forget pools of ended loops."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        for loop in [loop for loop in self._clients if loop.is_closed()]:
            del self._clients[loop]
        if client is not None:
            await client.aclose()

    async def send(self, body: dict[str, Any], *, stream: bool) -> httpx.Response:
        """POST ``body`` with retries; a 2xx response (its body unread when ``stream``)."""
        client = self.client()
        request = client.build_request(
            "POST",
            f"{self.base_url}/chat/completions",
            content=json.dumps(body).encode(),
            headers=self.headers(stream=stream),
        )
        attempts = self.settings.max_retries + 1
        for attempt in range(1, attempts + 1):
            retry_after: float | None = None
            retryable = True
            try:
                response = await client.send(request, stream=stream)
            except httpx.ReadTimeout:
                failure = f"did not answer within {self.settings.timeout:g}s"
                retryable = self.settings.retry_read_timeouts
            except httpx.TimeoutException:
                failure = f"did not answer within {self.settings.timeout:g}s"
            except httpx.ConnectError as error:
                failure = f"is unreachable: {describe_transport_error(error)}"
            except httpx.TransportError as error:
                failure = f"connection failed: {describe_transport_error(error)}"
            else:
                if response.status_code < 300:
                    return response
                try:
                    await response.aread()
                except httpx.TransportError as error:  # the error body itself broke off
                    failure = f"connection failed: {describe_transport_error(error)}"
                else:
                    failure, retry_after = self._refusal(response)
                finally:
                    await response.aclose()
            if not retryable:
                why = "it may still be generating; set retry_read_timeouts to retry"
                raise OpenAIModelError(
                    "MODEL_UNAVAILABLE", f"{self.server} {failure} (not retried: {why})"
                )
            if attempt == attempts:
                tried = f" (gave up after {attempts} attempts)" if attempts > 1 else ""
                raise OpenAIModelError("MODEL_UNAVAILABLE", f"{self.server} {failure}{tried}")
            await self._sleep(self.retry_delay(attempt, retry_after))
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    def _refusal(self, response: httpx.Response) -> tuple[str, float | None]:
        """A non-2xx answer: raise when retrying cannot help, else (failure, Retry-After)."""
        status = response.status_code
        if status in (401, 403):
            raise self._auth_error(response)
        if (status not in RETRYABLE_STATUS and status < 500) or is_validation_error(response):
            raise OpenAIModelError(
                "MODEL_REJECTED",
                f"{self.server} rejected the request ({status})" + detail_suffix(response),
            )
        what = "is rate limiting requests" if status == 429 else "is unavailable"
        return f"{what}: HTTP {status}{detail_suffix(response)}", parse_retry_after(
            response.headers
        )

    def retry_delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1-based): the server's
        ``Retry-After`` when it gave a usable one, else exponential backoff with jitter."""
        if retry_after is not None:
            return retry_after
        delay = min(self.backoff_max, self.backoff_base * 2.0 ** (attempt - 1))
        return delay + random.uniform(0, delay / 4)

    def parse(self, response: httpx.Response) -> ModelResponse:
        """The completion ``response`` holds; ``MODEL_BAD_RESPONSE`` when it is unreadable."""
        try:
            return parse_completion(response.json())
        except ValueError as error:  # JSON decode errors and ResponseShapeError
            why = str(error) if isinstance(error, ResponseShapeError) else "it is not JSON"
            raise OpenAIModelError(
                "MODEL_BAD_RESPONSE", f"{self.server} sent an unreadable response: {why}"
            ) from None

    def _auth_error(self, response: httpx.Response) -> OpenAIModelError:
        status = response.status_code
        if self.api_key is None:
            where = (
                f"set {self.settings.api_key_env} in the environment" if self.settings.api_key_env
                else "name the variable holding it in its models table's api_key_env"
            )
            message = f"{self.server} requires an API key ({status}): {where}"
        else:
            message = f"{self.server} rejected the API key ({status})" + detail_suffix(response)
        return OpenAIModelError("MODEL_AUTH", message)


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """httpx's default TLS context, built once per process: building one costs tens of
    milliseconds, and every model of a host can share it."""
    return httpx.create_ssl_context()
