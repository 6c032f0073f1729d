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
  ``OpenAIModel``, closed with ``aclose`` after the last call. Baseline: the same calls with
  the model's pool closed after each call, i.e. a new client and TCP connection per call —
  what the plugin did before pooling. The server runs in a child process here, so its thread
  does not share the client's interpreter lock, and counts the connections of each variant.

Prints min and median over the rounds and the ratios of the medians.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent_host_openai import OpenAIModel, Settings  # noqa: E402
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
    return OpenAIModel(Settings(base_url=server.url, model="bench", max_retries=0))


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


async def in_a_row(url: str, calls: int, *, close_each: bool) -> float:
    """Seconds for ``calls`` sequential calls on one model, its pool closed after each call
    (``close_each``) or only after the last."""
    model = OpenAIModel(Settings(base_url=url, model="bench", max_retries=0))
    start = time.perf_counter()
    for _ in range(calls):
        await model.complete(REQUEST, signal=CancelSignal())
        if close_each:
            await model.aclose()
    await model.aclose()
    return time.perf_counter() - start


SERVER_PROCESS = """
import ssl, sys
from agent_host_openai.testing import FakeServer, completion
tls = None
if len(sys.argv) > 2:
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(sys.argv[2], sys.argv[3])
server = FakeServer(tls=tls)
server.reply(*[completion("ok")] * int(sys.argv[1]))
server.start()
print(server.url, flush=True)
sys.stdin.read()
print(server.connections, flush=True)
server.stop()
"""
"""A loopback server in a child process: answers ``argv[1]`` calls (over TLS with the
certificate and key files ``argv[2:4]``), prints its URL, and when its standard input
closes, the number of connections it accepted."""


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


async def bench_pooling(rounds: int, calls: int, tls: tuple[str, str] | None) -> None:
    """Sequential calls on one pooled model against a new client per call."""
    variants = {"one pooled model": False, "a new client per call (baseline)": True}
    times: dict[str, list[float]] = {name: [] for name in variants}
    connections: dict[str, str] = {}
    for _ in range(rounds):
        for name, close_each in variants.items():
            with subprocess.Popen(
                [sys.executable, "-c", SERVER_PROCESS, str(calls), *(tls or ())],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            ) as server:
                assert server.stdin is not None and server.stdout is not None
                url = server.stdout.readline().strip()
                times[name].append(await in_a_row(url, calls, close_each=close_each))
                server.stdin.close()
                connections[name] = server.stdout.readline().strip()
    over = "HTTPS" if tls else "plain HTTP"
    print(f"pooling over {over}: {calls} sequential calls, {rounds} rounds (per call)")
    pooled, fresh = (
        summary(f"{name} [{connections[name]} conn]", [t / calls for t in seconds])
        for name, seconds in times.items()
    )
    ratio("speed-up of pooling over a new client per call", fresh, pooled)


def loopback_certificate(directory: Path) -> tuple[str, str]:
    """A self-signed certificate and key for 127.0.0.1 (made by ``openssl``), which this
    process then trusts (``SSL_CERT_FILE``, read by httpx when it builds its TLS context)."""
    cert, key = str(directory / "cert.pem"), str(directory / "key.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", key, "-out", cert],
        check=True,
        capture_output=True,
    )  # fmt: skip
    os.environ["SSL_CERT_FILE"] = cert
    return cert, key


async def main() -> None:
    """Parse the options and run the measurements."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=500)
    parser.add_argument("--pace-ms", type=float, default=2.0)
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()
    print(f"python {platform.python_version()}, loopback FakeServer")
    server = FakeServer()
    server.start()
    with tempfile.TemporaryDirectory() as directory:
        tls = loopback_certificate(Path(directory))  # before any model builds a TLS context
        try:
            await bench_first_text(server, args.rounds, args.tokens, args.pace_ms / 1e3)
            await bench_pooling(args.rounds, args.calls, None)
            await bench_pooling(args.rounds, args.calls, tls)
        finally:
            server.stop()
    rejected = [request.rejected for request in server.requests if request.rejected]
    assert not rejected, f"the server refused requests: {rejected[:1]}"


if __name__ == "__main__":
    asyncio.run(main())
