"""``OpenAIModel``: the host's model protocol over an OpenAI-compatible chat-completions server.

``complete`` is one ``POST {base_url}/chat/completions``; ``stream`` is the same call with
``stream: true``, handing out text and tool-call deltas as the server-sent events arrive and
the assembled response last. Calls share one pooled ``httpx.AsyncClient`` per event loop (kept
alive across calls, closed by ``aclose``, which the model registry calls when the plugin is
deactivated or the host closes).

Retries happen only before an answer has begun: connection errors, connect timeouts,
408/409/429 and 5xx answers are retried up to ``max_retries`` times with exponential backoff and
jitter, honouring ``Retry-After`` / ``retry-after-ms`` (0–60 s). A read timeout is not retried
unless ``retry_read_timeouts`` (the server may still be generating the abandoned answer, and a
retry would queue behind it); a 5xx whose body is a request-validation error, 401/403 and other
4xx answers fail at once. A stream that breaks off is never retried (its deltas were already
handed out); one that carries no event at all for a request with tools is made again without
streaming (see ``_stop_streaming_tools``). Every failure is one ``OpenAIModelError`` with a
code and a one-line message naming the server.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import random
import ssl
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import httpx

from agent_host_openai import DEFAULT_MAX_TOKENS
from agent_host_openai.convert import (
    ResponseShapeError,
    calls_from_text,
    parse_completion,
    request_body,
)
from agent_host_openai.failures import (
    RETRYABLE_STATUS,
    OpenAIModelError,
    describe_transport_error,
    detail_suffix,
    display_url,
    is_validation_error,
    parse_retry_after,
)
from agent_host_openai.served import mismatch, served_ids
from agent_host_openai.streaming import Holdback, SseDecoder, StreamAssembler
from host.agents.models import ModelRequest, ModelResponse, StreamEvent, TextDelta
from host.cancel import CancelSignal

log = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[None]]
T = TypeVar("T")

__all__ = ["OpenAIModel", "OpenAIModelError", "display_url"]


class _Stalled(Exception):
    """No event arrived for ``timeout`` seconds."""


class _Refused(Exception):
    """A streamed request with tools got no event at all (``_stop_streaming_tools``)."""


class OpenAIModel:
    """A model served by an OpenAI-compatible ``/chat/completions`` endpoint.

    ``stream=False`` makes ``stream`` fall back to one non-streaming call (for servers without
    server-sent events); ``stream_tools=False`` does so only for requests that offer tools.
    ``max_tokens=None`` sends no limit. ``text_tool_calls`` reads an answer that is only tool
    calls written as text as those calls (``convert.calls_from_text``); its streamed text is
    held back while it may be one (``streaming.Holdback``). ``backoff_base`` is the first retry
    delay in seconds (doubling, capped at ``backoff_max``, plus up to 25 % jitter); ``sleep`` is
    awaited for every delay (tests inject a recorder).
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
        max_tokens: int | None = DEFAULT_MAX_TOKENS,
        stream: bool = True,
        stream_tools: bool = True,
        retry_read_timeouts: bool = False,
        text_tool_calls: bool = False,
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
        self.max_tokens = max_tokens
        self.streaming = stream
        self.retry_read_timeouts = retry_read_timeouts
        self.text_tool_calls = text_tool_calls
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self._sleep = sleep
        self._server = f"model server {display_url(self.base_url)}"
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient]
        self._clients = weakref.WeakKeyDictionary()
        self.stream_tools = stream_tools

    def __repr__(self) -> str:
        return f"OpenAIModel(base_url={display_url(self.base_url)!r}, model={self.model!r})"

    # -- the model protocol ------------------------------------------------------------------

    async def complete(self, request: ModelRequest, *, signal: CancelSignal) -> ModelResponse:
        """Answer ``request``; setting ``signal`` abandons the HTTP call (code ``CANCELLED``)."""
        body = request_body(self.model, request, max_tokens=self._limit(request))
        response = await self._until_signal(self._send(body, stream=False), signal)
        return self._calls_from_text(self._parse(response), request)

    async def stream(
        self, request: ModelRequest, *, signal: CancelSignal
    ) -> AsyncIterator[StreamEvent]:
        """Deltas as the server sends them, then the response. Closing the iterator (or
        cancelling its consumer) closes the HTTP request at once."""
        if not self.streaming or (request.tools and not self.stream_tools):
            async for event in self._whole(request, signal):
                yield event
            return
        body = request_body(self.model, request, max_tokens=self._limit(request), stream=True)
        response = await self._until_signal(self._send(body, stream=True), signal)
        refused = False
        try:
            if not response.headers.get("content-type", "").startswith("text/event-stream"):
                await response.aread()  # a server that ignores "stream": one whole answer
                whole = self._calls_from_text(self._parse(response), request)
                if whole.text:
                    yield TextDelta(whole.text)
                yield whole
                return
            try:
                async for event in self._events(response, request, signal):
                    yield event
            except _Refused:
                refused = True
        finally:
            await response.aclose()
        if refused:
            self._stop_streaming_tools()
            async for event in self._whole(request, signal):
                yield event

    def _calls_from_text(self, response: ModelResponse, request: ModelRequest) -> ModelResponse:
        """``response`` with calls written as text read as calls, when so configured."""
        return calls_from_text(response, request) if self.text_tool_calls else response

    async def _events(
        self, response: httpx.Response, request: ModelRequest, signal: CancelSignal
    ) -> AsyncIterator[StreamEvent]:
        """The deltas of a streamed answer, then its response; ``_Refused`` when a request
        with tools got no event at all. Text that may be calls written as text is held back
        (``Holdback``) and never handed out when it was."""
        assembler, decoder = StreamAssembler(), SseDecoder()
        hold = Holdback() if self.text_tool_calls and request.tools else None
        received = False
        try:
            async for payload in self._payloads(response, decoder, signal):
                received = True
                for delta in self._feed(assembler, payload):
                    if isinstance(delta, TextDelta) and hold is not None:
                        delta = TextDelta(hold.feed(delta.text))
                    if not isinstance(delta, TextDelta) or delta.text:
                        yield delta
        except _Stalled:
            if received or not request.tools:
                raise self._stalled(received) from None
        if not received and request.tools:
            raise _Refused
        answer = self._calls_from_text(self._finish(assembler), request)
        held = hold.release() if hold is not None and not answer.tool_calls else ""
        if held:
            yield TextDelta(held)
        yield answer

    def _limit(self, request: ModelRequest) -> int | None:
        """The ``max_tokens`` to send: the smaller of the request's and this model's."""
        limits = [n for n in (request.max_tokens, self.max_tokens) if n is not None]
        return min(limits) if limits else None

    async def _whole(
        self, request: ModelRequest, signal: CancelSignal
    ) -> AsyncIterator[StreamEvent]:
        """One non-streaming call as a stream: its text as one delta, then the response."""
        response = await self.complete(request, signal=signal)
        if response.text:
            yield TextDelta(response.text)
        yield response

    def _stop_streaming_tools(self) -> None:
        """The server accepted a streamed request with tools and then sent no event (the
        stream ended or stalled): some servers cannot stream tool calls (llama-cpp-python's
        chatml-function-calling fails after the headers and keeps the stream open with
        pings). Nothing was generated, so the call is made again without streaming, and so
        are later calls of this model that offer tools."""
        self.stream_tools = False
        log.warning(
            "%s sent no event for a streamed request with tools: such requests are no longer "
            "streamed (set stream_tools = false in [plugins.openai] to skip the attempt)",
            self._server,
        )

    async def check_warnings(self) -> list[str]:
        """For ``models check``: a line when the server does not serve the configured model
        id (``served.mismatch``); nothing when it does or cannot say."""
        ids = await served_ids(self._client(), self.base_url, self._headers(stream=False))
        found = mismatch(self.model, ids)
        return [found] if found else []

    async def aclose(self) -> None:
        """Close the connection pool of the running event loop; forget pools of ended loops."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        for loop in [loop for loop in self._clients if loop.is_closed()]:
            del self._clients[loop]
        if client is not None:
            await client.aclose()

    # -- streaming ---------------------------------------------------------------------------

    async def _payloads(
        self, response: httpx.Response, decoder: SseDecoder, signal: CancelSignal
    ) -> AsyncIterator[str]:
        """The event payloads of ``response``; a broken or stalled stream is one error.

        A stream stalls when no event arrives for ``timeout`` seconds: comments do not count,
        since some servers keep a failed stream open with ``: ping`` lines.
        """
        clock = asyncio.get_running_loop().time
        last = clock()
        try:
            async for line in response.aiter_lines():
                self._raise_if_cancelled(signal)
                payload = decoder.feed(line)
                if payload is not None:
                    last = clock()
                    yield payload
                elif clock() - last > self.timeout:
                    raise _Stalled
        except (httpx.TimeoutException, _Stalled):
            raise _Stalled from None
        except httpx.TransportError as error:
            why = f"the stream broke off: {describe_transport_error(error)}"
            raise self._bad_stream(why) from None
        tail = decoder.flush()
        if tail is not None:
            yield tail

    def _stalled(self, begun: bool) -> OpenAIModelError:
        where = "in the middle of an answer" if begun else "after accepting the request"
        return OpenAIModelError(
            "MODEL_UNAVAILABLE", f"{self._server} sent nothing for {self.timeout:g}s {where}"
        )

    def _feed(self, assembler: StreamAssembler, payload: str) -> list[Any]:
        try:
            return list(assembler.feed(payload))
        except ResponseShapeError as error:
            raise self._bad_stream(str(error)) from None

    def _finish(self, assembler: StreamAssembler) -> ModelResponse:
        try:
            return assembler.response()
        except ResponseShapeError as error:
            raise self._bad_stream(str(error)) from None

    def _bad_stream(self, why: str) -> OpenAIModelError:
        return OpenAIModelError("MODEL_BAD_RESPONSE", f"{self._server} sent a bad stream: {why}")

    # -- cancellation ------------------------------------------------------------------------

    async def _until_signal(
        self, work: Coroutine[Any, Any, httpx.Response], signal: CancelSignal
    ) -> httpx.Response:
        """Run ``work`` unless ``signal`` is set first; then abandon it (code ``CANCELLED``)."""
        if signal.is_set():
            work.close()
            self._raise_if_cancelled(signal)
        task = asyncio.ensure_future(work)
        stop = asyncio.ensure_future(signal.wait())
        try:
            await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:  # our own task was cancelled: take the request down with it
            task.cancel()
            await asyncio.wait({task})
            raise
        finally:
            stop.cancel()
        if signal.is_set():
            if not task.done():
                task.cancel()
                await asyncio.wait({task})
            elif not task.cancelled() and task.exception() is None:
                await task.result().aclose()  # the signal wins: the answer is dropped
            self._raise_if_cancelled(signal)
        return task.result()

    def _raise_if_cancelled(self, signal: CancelSignal) -> None:
        if signal.is_set():
            raise OpenAIModelError(
                "CANCELLED", f"model request cancelled: {signal.reason or 'cancelled'}"
            )

    # -- HTTP --------------------------------------------------------------------------------

    def _client(self) -> httpx.AsyncClient:
        """The pooled client of the running event loop (made on first use)."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None or client.is_closed:
            client = httpx.AsyncClient(timeout=self.timeout, verify=_ssl_context())
            self._clients[loop] = client
        return client

    def _headers(self, *, stream: bool) -> dict[str, str]:
        accept = "text/event-stream" if stream else "application/json"
        headers = {"Content-Type": "application/json", "Accept": accept}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    async def _send(self, body: dict[str, Any], *, stream: bool) -> httpx.Response:
        """POST ``body`` with retries; a 2xx response (its body unread when ``stream``)."""
        client = self._client()
        request = client.build_request(
            "POST",
            f"{self.base_url}/chat/completions",
            content=json.dumps(body).encode(),
            headers=self._headers(stream=stream),
        )
        attempts = self.max_retries + 1
        for attempt in range(1, attempts + 1):
            retry_after: float | None = None
            retryable = True
            try:
                response = await client.send(request, stream=stream)
            except httpx.ReadTimeout:
                failure = f"did not answer within {self.timeout:g}s"
                retryable = self.retry_read_timeouts
            except httpx.TimeoutException:
                failure = f"did not answer within {self.timeout:g}s"
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
                    "MODEL_UNAVAILABLE", f"{self._server} {failure} (not retried: {why})"
                )
            if attempt == attempts:
                tried = f" (gave up after {attempts} attempts)" if attempts > 1 else ""
                raise OpenAIModelError("MODEL_UNAVAILABLE", f"{self._server} {failure}{tried}")
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
                f"{self._server} rejected the request ({status})" + detail_suffix(response),
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
            message = f"{self._server} rejected the API key ({status})" + detail_suffix(response)
        return OpenAIModelError("MODEL_AUTH", message)


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """httpx's default TLS context, built once per process: building one costs tens of
    milliseconds, and every model of a host can share it."""
    return httpx.create_ssl_context()
