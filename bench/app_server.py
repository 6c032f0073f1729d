"""What ``agent-host app-server`` adds to a streamed delta, and how it bears 50 streams at once.

A model (``Ticker``) streams ``--deltas`` text deltas per answer, ``--interval`` ms apart, each
carrying the ``time.monotonic_ns()`` of its making (one clock for every process of the
machine). Measured, in one run:

* **baseline** — an in-process ``Agent.on_stream`` listener in this process: the delay from
  making a delta to the listener;
* **stdio** and **WebSocket** — a real app-server subprocess (this file with ``--serve``, the
  host as the CLI opens it plus the ticker model), the client here: the delay from making a
  delta to reading its ``item/agentMessage/delta`` notification;
* **50 threads** — ``--threads`` threads streaming at once through one stdio server: every
  delta must arrive; the server's event loop is watched by a 1 ms ticker whose lateness is its
  stall (p99 and max, printed by the server on its way out; only in this run, where it
  would not add its own wake-ups to a latency).

Targets (issue): added latency p99 ≤ 1 ms on loopback; 50 threads: everything delivered, the
loop's stall p99 < 5 ms.

    .venv/bin/python bench/app_server.py [--deltas N] [--interval MS] [--threads N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from host.agents.models import ModelRequest, ModelResponse, StreamEvent, TextDelta
from host.cancel import CancelSignal

STALL = "stall"


class Ticker:
    """A streaming model: ``deltas`` stamped deltas, ``interval`` seconds apart."""

    def __init__(self, deltas: int, interval: float) -> None:
        self.deltas, self.interval = deltas, interval

    async def complete(self, request: ModelRequest, *, signal: CancelSignal) -> ModelResponse:
        return ModelResponse(text="tick")

    async def stream(
        self, request: ModelRequest, *, signal: CancelSignal
    ) -> AsyncIterator[StreamEvent]:
        parts = []
        for _ in range(self.deltas):
            await asyncio.sleep(self.interval)
            part = f"{time.monotonic_ns()} "
            parts.append(part)
            yield TextDelta(part)
        yield ModelResponse(text="".join(parts))


def percentiles(samples: list[float]) -> str:
    """``p50 / p99 / max`` in ms."""
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"p50 {statistics.median(ordered):.3f} / p99 {p99:.3f} / max {ordered[-1]:.3f} ms"


def open_bench_host(data_dir: Path, deltas: int, interval: float) -> Any:
    from host.app import open_host

    host = open_host(data_dir=data_dir)
    host.services.models.register("ticker", Ticker(deltas, interval), default=True)
    return host


# -- the server (a subprocess) ---------------------------------------------------------------


async def watch_loop(stalls: list[float]) -> None:
    """Sleep 1 ms again and again; how late each wake-up is, in ms."""
    while True:
        before = time.perf_counter()
        await asyncio.sleep(0.001)
        stalls.append((time.perf_counter() - before - 0.001) * 1000)


async def serve(listen: str, data_dir: Path, deltas: int, interval: float, watch: bool) -> None:
    from host.appserver.server import AppServer

    host = open_bench_host(data_dir, deltas, interval)
    server = AppServer(host)
    stalls: list[float] = []
    watching = watch_loop(stalls) if watch else asyncio.sleep(0)
    watcher = asyncio.get_running_loop().create_task(watching)
    try:
        if listen == "stdio://":
            from host.appserver.stdio import serve as serve_stdio

            await serve_stdio(server, sys.stdin.buffer, sys.stdout.buffer)
        else:
            from host.appserver.websocket import address, serve_websocket

            await serve_websocket(server, *address(listen, False), data_dir / "home")
    finally:
        watcher.cancel()
        server.close()
        await host.aclose()
        print(f"{STALL} {json.dumps(stalls)}", file=sys.stderr, flush=True)


# -- the clients -----------------------------------------------------------------------------


async def baseline(data_dir: Path, deltas: int, interval: float) -> list[float]:
    """Delays (ms) to an in-process ``on_stream`` listener."""
    host = open_bench_host(data_dir, deltas, interval)
    delays: list[float] = []

    def heard(event: StreamEvent) -> None:
        if isinstance(event, TextDelta):
            delays.append((time.monotonic_ns() - int(event.text)) / 1e6)

    agent = await host.services.agents.create(label="user")
    agent.on_stream(heard)
    agent.followup("go")
    await agent.wait_idle()
    await host.aclose()
    host.close()
    return delays


def start_server(
    listen: str, data_dir: Path, deltas: int, interval: float, watch: bool = False
) -> Any:
    command = [sys.executable, __file__, "--serve", listen, "--data-dir", str(data_dir),
               "--deltas", str(deltas), "--interval", str(interval * 1000)]
    if watch:
        command.append("--watch")
    env = {**os.environ, "AGENT_HOST_HOME": str(data_dir / "home")}
    return subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )


def stdio_run(
    data_dir: Path, deltas: int, interval: float, threads: int
) -> tuple[list[float], list[float]]:
    """Delays (ms) of every delta over stdio for ``threads`` threads at once, and the stalls."""
    server = start_server("stdio://", data_dir, deltas, interval, watch=threads > 1)
    assert server.stdin is not None and server.stdout is not None and server.stderr is not None

    def send(message: dict[str, Any]) -> None:
        server.stdin.write(json.dumps(message).encode() + b"\n")
        server.stdin.flush()

    send({"id": 0, "method": "initialize", "params": {"clientInfo": {"name": "b", "version": "1"}}})
    send({"method": "initialized"})
    for n in range(threads):
        send({"id": n + 1, "method": "thread/start"})
    delays: list[float] = []
    done = started = 0
    for line in server.stdout:
        message = json.loads(line)
        if message.get("method") == "item/agentMessage/delta":
            delays.append((time.monotonic_ns() - int(message["params"]["delta"])) / 1e6)
        elif message.get("method") == "turn/completed":
            done += 1
            if done == threads:
                break
        elif "result" in message and "thread" in message["result"]:
            started += 1
            thread = message["result"]["thread"]["id"]
            text = [{"type": "text", "text": "go"}]
            send({"id": 1000 + started, "method": "turn/start",
                  "params": {"threadId": thread, "input": text}})
    server.stdin.close()
    server.wait()
    stalls = stall_samples(server.stderr.read().decode()) if threads > 1 else []
    return delays, stalls


def stall_samples(stderr: str) -> list[float]:
    for line in stderr.splitlines():
        if line.startswith(STALL + " "):
            return [float(x) for x in json.loads(line[len(STALL) + 1 :])]
    raise RuntimeError(f"the server said no stalls:\n{stderr}")


async def websocket_run(data_dir: Path, deltas: int, interval: float) -> list[float]:
    """Delays (ms) of every delta of one thread over WebSocket."""
    from websockets.asyncio.client import connect

    server = start_server("ws://127.0.0.1:0", data_dir, deltas, interval)
    assert server.stderr is not None
    url = ""
    while not url:
        line = server.stderr.readline().decode()
        if "listening on " in line:
            url = line.rsplit(" ", 1)[1].strip()
        elif not line:
            raise RuntimeError("the server ended before it listened")
    token = (data_dir / "home" / "app-server.token").read_text().strip()
    delays: list[float] = []
    async with connect(url, additional_headers={"Authorization": f"Bearer {token}"}) as socket:
        info = {"clientInfo": {"name": "b", "version": "1"}}
        await socket.send(json.dumps({"id": 0, "method": "initialize", "params": info}))
        await socket.send(json.dumps({"method": "initialized"}))
        await socket.send(json.dumps({"id": 1, "method": "thread/start"}))
        async for frame in socket:
            message = json.loads(frame)
            if message.get("id") == 1:
                thread = message["result"]["thread"]["id"]
                params = {"threadId": thread, "input": [{"type": "text", "text": "go"}]}
                await socket.send(json.dumps({"id": 2, "method": "turn/start", "params": params}))
            elif message.get("method") == "item/agentMessage/delta":
                delays.append((time.monotonic_ns() - int(message["params"]["delta"])) / 1e6)
            elif message.get("method") == "turn/completed":
                break
    server.terminate()
    server.wait()
    return delays


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=2000)
    parser.add_argument("--interval", type=float, default=1.0, help="ms between deltas")
    parser.add_argument("--threads", type=int, default=50)
    parser.add_argument(
        "--many-interval", type=float, default=20.0, help="ms between deltas with --threads"
    )
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--watch", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    interval = args.interval / 1000
    if args.serve:
        asyncio.run(serve(args.serve, args.data_dir, args.deltas, interval, args.watch))
        return
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        base = asyncio.run(baseline(root / "base", args.deltas, interval))
        stdio, _ = stdio_run(root / "stdio", args.deltas, interval, 1)
        ws = asyncio.run(websocket_run(root / "ws", args.deltas, interval))
        print(f"{args.deltas} deltas {args.interval} ms apart; python {sys.version.split()[0]}")
        print(f"in-process on_stream   {percentiles(base)}")
        print(f"stdio                  {percentiles(stdio)}")
        print(f"WebSocket              {percentiles(ws)}")
        for name, run in (("stdio", stdio), ("WebSocket", ws)):
            added = statistics.quantiles(run, n=100)[98] - statistics.quantiles(base, n=100)[98]
            print(f"added p99 {name:<10} {added:+.3f} ms")
        each = args.deltas // 10
        many, stalls = stdio_run(root / "many", each, args.many_interval / 1000, args.threads)
        print(f"{args.threads} threads x {each} deltas {args.many_interval} ms apart: "
              f"{len(many)} of {args.threads * each} delivered; delays {percentiles(many)}")
        print(f"event-loop stall (1 ms ticker lateness) {percentiles(stalls)}")


if __name__ == "__main__":
    main()
