"""OpenAI model client benchmark: streaming's time to first text, and connection pooling.

Not a test. Run from the project root with the project venv::

    .venv/bin/python bench/models.py [--rounds N] [--tokens N] [--pace-ms X] [--calls N]

Everything runs in one process: ``OpenAIModel`` against the plugin's loopback ``FakeServer``
(a real HTTP/1.1 server on 127.0.0.1, one thread per connection). Measured, interleaved round
by round, each with its baseline from the same run:

* **time to first text**: a reply of ``--tokens`` words streamed one word per event, the server
  waiting ``--pace-ms`` between events as a generating model would; from calling ``stream`` to
  the first ``TextDelta`` (and to the final response). Baseline: the same words as one
  non-streaming reply that the server holds back for the same total (tokens × pace), timed
  from calling ``complete`` to its return.
* **pooling**: ``--calls`` sequential ``complete`` calls (a short reply, no delay) on one
  ``OpenAIModel``, closed with ``aclose`` after the last call. Baselines: the same calls with
  a new ``OpenAIModel`` per call (``aclose`` after each: a new client, TLS context and TCP
  connection per call), and with one model whose pool is closed after each call (a new client
  and connection per call, the TLS context kept: what the plugin did before pooling). The
  server counts the TCP connections of each variant.

Prints min and median over the rounds and the ratios of the medians.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent_host_openai import OpenAIModel  # noqa: E402
from agent_host_openai.testing import (  # noqa: E402
    FakeServer,
    Reply,
    Stream,
    completion,
    stream_chunks,
    text_tokens,
)

from host.agents.models import ModelRequest, ModelResponse, TextDelta  # noqa: E402
from host.cancel import CancelSignal  # noqa: E402
from host.sessions.model import MessageEvent  # noqa: E402

REQUEST = ModelRequest(
    agent_id="a",
    label=None,
    system_prompt="You are terse.",
    messages=(MessageEvent(role="user", content="hi"),),
)


def new_model(server: FakeServer) -> OpenAIModel:
    """A model on ``server`` that fails instead of retrying (a retry would skew a timing)."""
    return OpenAIModel(base_url=server.url, model="bench", max_retries=0)


async def first_text(model: OpenAIModel) -> tuple[float, float]:
    """Seconds from calling ``stream`` to the first text delta, and to the final response."""
    start = time.perf_counter()
    first: float | None = None
    async for event in model.stream(REQUEST, signal=CancelSignal()):
        if first is None and isinstance(event, TextDelta):
            first = time.perf_counter() - start
        if isinstance(event, ModelResponse):
            assert first is not None, "the stream sent no text"
            return first, time.perf_counter() - start
    raise AssertionError("the stream ended without a response")


async def whole_reply(model: OpenAIModel) -> float:
    """Seconds from calling ``complete`` to its return."""
    start = time.perf_counter()
    await model.complete(REQUEST, signal=CancelSignal())
    return time.perf_counter() - start


async def in_a_row(server: FakeServer, calls: int, *, new_each: bool, close_each: bool) -> float:
    """Seconds for ``calls`` sequential calls: on one model or (``new_each``) a new model per
    call, its pool closed after each call (``close_each``) or only after the last."""
    start = time.perf_counter()
    model = new_model(server)
    for index in range(calls):
        if new_each and index:
            model = new_model(server)
        await model.complete(REQUEST, signal=CancelSignal())
        if close_each:
            await model.aclose()
    await model.aclose()
    return time.perf_counter() - start


def summary(label: str, seconds: list[float]) -> tuple[float, float]:
    """Print min and median of ``seconds`` in ms; return both."""
    low, mid = min(seconds) * 1e3, statistics.median(seconds) * 1e3
    print(f"  {label:<44} min {low:9.3f} ms   median {mid:9.3f} ms")
    return low, mid


def ratio(text: str, part: tuple[float, float], whole: tuple[float, float]) -> None:
    """Print ``part`` / ``whole`` on the mins and on the medians."""
    print(f"  {text}: {part[0] / whole[0]:.4g} (min), {part[1] / whole[1]:.4g} (median)")


async def bench_first_text(server: FakeServer, rounds: int, tokens: int, pace: float) -> None:
    """Streamed time to first text against the whole non-streaming reply."""
    text = text_tokens(tokens)
    model = new_model(server)
    server.reply(completion("warm-up"))
    await model.complete(REQUEST, signal=CancelSignal())  # the pool holds a connection
    firsts: list[float] = []
    streamed: list[float] = []
    wholes: list[float] = []
    for _ in range(rounds):
        server.reply(Stream(stream_chunks(text), pace=pace))
        first_at, total = await first_text(model)
        firsts.append(first_at)
        streamed.append(total)
        server.reply(Reply(body=completion(text), delay=tokens * pace))
        wholes.append(await whole_reply(model))
    await model.aclose()
    print(f"time to first text: {tokens} tokens, {pace * 1e3:g} ms apart, {rounds} rounds")
    first = summary("streamed: first text", firsts)
    summary("streamed: whole reply", streamed)
    whole = summary("non-streaming: whole reply (baseline)", wholes)
    ratio("first text / non-streaming reply", first, whole)


async def bench_pooling(server: FakeServer, rounds: int, calls: int) -> None:
    """Sequential calls on one pooled model against a fresh model or client per call."""
    variants: dict[str, Callable[[FakeServer, int], Awaitable[float]]] = {
        "one pooled model": partial(in_a_row, new_each=False, close_each=False),
        "a new model per call (baseline)": partial(in_a_row, new_each=True, close_each=True),
        "one model, pool closed per call": partial(in_a_row, new_each=False, close_each=True),
    }
    times: dict[str, list[float]] = {name: [] for name in variants}
    connections: dict[str, int] = {}
    for _ in range(rounds):
        for name, run in variants.items():
            server.reply(*[completion("ok")] * calls)
            before = server.connections
            times[name].append(await run(server, calls))
            connections[name] = server.connections - before
    print(f"pooling: {calls} sequential calls, {rounds} rounds (per call)")
    per_call = {
        name: summary(f"{name} [{connections[name]} conn]", [t / calls for t in seconds])
        for name, seconds in times.items()
    }
    base = per_call.pop("one pooled model")
    for name, figures in per_call.items():
        ratio(f"speed-up of pooling over {name}", figures, base)
    tls = [timed_tls_context() for _ in range(rounds)]
    summary("httpx.create_ssl_context() (one per model)", tls)


def timed_tls_context() -> float:
    """Seconds ``httpx.create_ssl_context`` takes (each new ``OpenAIModel`` builds one)."""
    start = time.perf_counter()
    httpx.create_ssl_context()
    return time.perf_counter() - start


async def main() -> None:
    """Parse the options and run both measurements against one server."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=500)
    parser.add_argument("--pace-ms", type=float, default=2.0)
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()
    print(f"python {platform.python_version()}, loopback FakeServer")
    server = FakeServer()
    server.start()
    try:
        await bench_first_text(server, args.rounds, args.tokens, args.pace_ms / 1e3)
        await bench_pooling(server, args.rounds, args.calls)
    finally:
        server.stop()
    rejected = [request.rejected for request in server.requests if request.rejected]
    assert not rejected, f"the server refused requests: {rejected[:1]}"


if __name__ == "__main__":
    asyncio.run(main())
