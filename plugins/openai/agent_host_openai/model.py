"""``OpenAIModel``: the host's model protocol over an OpenAI-compatible chat-completions server.

``complete`` is one ``POST {base_url}/chat/completions``; ``stream`` is the same call with
``stream: true``, handing out text and tool-call deltas as the server-sent events arrive and
the assembled response last. The HTTP exchange — pooling, headers, retries before an answer
has begun — is the ``endpoint.ChatEndpoint``'s; ``aclose`` (which the model registry calls when
the plugin is deactivated or the host closes) closes its pool. A stream that breaks off is never
retried (its deltas were already handed out); one that carries no event at all for a request
with tools is made again without streaming (see ``_stop_streaming_tools``). Every failure is one
``OpenAIModelError`` with a code and a one-line message naming the server.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Coroutine
from typing import Any

import httpx

from agent_host_openai.convert import ResponseShapeError, calls_from_text, request_body
from agent_host_openai.endpoint import ChatEndpoint, Sleep
from agent_host_openai.failures import OpenAIModelError, describe_transport_error, display_url
from agent_host_openai.repeats import asked_again
from agent_host_openai.served import mismatch
from agent_host_openai.settings import Settings
from agent_host_openai.streaming import Holdback, SseDecoder, StreamAssembler
from host.api import CancelSignal, ModelRequest, ModelResponse, StreamEvent, TextDelta

log = logging.getLogger(__name__)


__all__ = ["OpenAIModel", "OpenAIModelError", "display_url"]


class _Stalled(Exception):
    """No event arrived for ``timeout`` seconds."""


class _Refused(Exception):
    """A streamed request with tools got no event at all (``_stop_streaming_tools``)."""


class OpenAIModel:
    """A model served by an OpenAI-compatible ``/chat/completions`` endpoint.

    Built from its ``Settings``: ``stream=False`` makes ``stream`` fall back to one
    non-streaming call (for servers without server-sent events); ``stream_tools=False`` does so
    only for requests that offer tools. ``max_tokens=0`` sends no limit. ``text_tool_calls="json"``
    reads an answer that is only tool calls written as text as those calls
    (``convert.calls_from_text``); its streamed text is held back while it may be one
    (``streaming.Holdback``). The URL, ``api_key``, timeout, retries,
    ``backoff_base``/``backoff_max`` and ``sleep`` are the ``ChatEndpoint``'s.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        api_key: str | None = None,
        backoff_base: float = 0.5,
        backoff_max: float = 8.0,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if settings.model is None:
            raise ValueError("an OpenAI model needs a model id")
        self.settings = settings
        self.model = settings.model
        self.stream_tools = settings.stream_tools
        """Whether requests that offer tools are streamed (until the server is found unable)."""
        self.endpoint = ChatEndpoint(
            settings,
            api_key=api_key,
            backoff_base=backoff_base,
            backoff_max=backoff_max,
            sleep=sleep,
        )

    @property
    def base_url(self) -> str:
        """The server URL up to ``/chat/completions`` (the endpoint's)."""
        return self.endpoint.base_url

    @property
    def api_key(self) -> str | None:
        """The key sent, if any (the endpoint's)."""
        return self.endpoint.api_key

    @property
    def timeout(self) -> float:
        """Seconds per HTTP phase, and the longest a stream may stay silent."""
        return self.settings.timeout

    @property
    def max_retries(self) -> int:
        """Retries before an answer has begun."""
        return self.settings.max_retries

    @property
    def max_tokens(self) -> int | None:
        """The longest answer asked for, None for no limit (``chat`` names it when one is cut)."""
        return self.settings.max_tokens or None

    @property
    def streaming(self) -> bool:
        """Whether answers are streamed; the host calls ``complete`` for a model that says no
        (``host.agents.models.streams``)."""
        return self.settings.stream

    @property
    def text_tool_calls(self) -> bool:
        """Whether an answer that is only tool calls written as JSON text is read as those calls."""
        return self.settings.text_tool_calls == "json"

    @property
    def _server(self) -> str:
        return self.endpoint.server

    def __repr__(self) -> str:
        return f"OpenAIModel(base_url={display_url(self.base_url)!r}, model={self.model!r})"

    # -- the model protocol ------------------------------------------------------------------

    async def complete(self, request: ModelRequest, *, signal: CancelSignal) -> ModelResponse:
        """Answer ``request``; setting ``signal`` abandons the HTTP call (code ``CANCELLED``)."""
        body = request_body(self.model, request, max_tokens=self._limit(request))
        response = await self._until_signal(self.endpoint.send(body, stream=False), signal)
        answer, again = self._read(self.endpoint.parse(response), request)
        return answer if again is None else await self.complete(again, signal=signal)

    async def stream(
        self, request: ModelRequest, *, signal: CancelSignal
    ) -> AsyncGenerator[StreamEvent, None]:
        """Deltas as the server sends them, then the response. Closing the iterator (or
        cancelling its consumer) closes the HTTP request at once."""
        if not self.streaming or (request.tools and not self.stream_tools):
            async for event in self._whole(request, signal):
                yield event
            return
        body = request_body(self.model, request, max_tokens=self._limit(request), stream=True)
        response = await self._until_signal(self.endpoint.send(body, stream=True), signal)
        refused = False
        try:
            if not response.headers.get("content-type", "").startswith("text/event-stream"):
                await response.aread()  # a server that ignores "stream": one whole answer
                whole, again = self._read(self.endpoint.parse(response), request)
                if again is not None:
                    whole = await self.complete(again, signal=signal)
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

    def _read(
        self, response: ModelResponse, request: ModelRequest
    ) -> tuple[ModelResponse, ModelRequest | None]:
        """``response`` with calls written as text read as calls, when so configured, and the
        request to make instead when those calls repeat the calls just answered
        (``repeats.asked_again``; said on the log)."""
        if not self.text_tool_calls:
            return response, None
        answer = calls_from_text(response, request)
        again = None if response.tool_calls else asked_again(request, answer)
        if again is not None:
            repeat = next(m for m in reversed(again.messages) if m.role == "assistant")
            names = ", ".join(dict.fromkeys(call.name for call in repeat.tool_calls))
            log.warning(
                "the model repeated its call of %s instead of answering; asked again "
                "without tools",
                names,
            )
        return answer, again

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
        answer, again = self._read(self._finish(assembler), request)
        if again is not None:
            async for event in self.stream(again, signal=signal):
                yield event
            return
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
        found = mismatch(self.model, await self.endpoint.served_ids())
        return [found] if found else []

    async def aclose(self) -> None:
        """Close the connection pool of the running event loop; forget pools of ended loops."""
        await self.endpoint.aclose()

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
