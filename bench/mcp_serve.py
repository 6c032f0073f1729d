"""``agent-host mcp serve`` benchmark: a tool's round trip, and the long poll's wake-up.

Not a test. Run from the project root with the project venv::

    .venv/bin/python bench/mcp_serve.py [--rounds N] [--calls N] [--polls N]

Each measurement has its baseline from the same run, rounds interleaved:

* **round trip**: the SDK's ``ClientSession.call_tool("list_agents")`` over stdio to a real
  ``agent-host mcp serve`` subprocess (a fresh data directory; a root with no subagents),
  ``--calls`` calls per round, one at a time. Baseline: the same client calling ``echo`` of a
  trivial SDK ``MCPServer`` over stdio (the plugin tests' ``fault_server.py``). Target:
  ≤ 1.5×.
* **long-poll wake-up**: in one process, ``mcp serve``'s server (``Served``, over the SDK's
  in-memory streams) with an SDK client waiting in ``read_agent_messages`` (``wait_seconds``
  10); a report notice is then accepted into the root's inbox as a subagent's ``report``
  delivers it (``Inbox.accept_async``, JSONL, fsync never). Per poll: the append's own
  acknowledgement (``accept_async`` returning) and the client's receipt of the read, both
  from just before the append. Target: p99 of (receipt − acknowledgement) ≤ 5 ms. Also the
  same read when a message is already there (no wait): what any call costs through the SDK.

Prints ms: min and median over rounds of the per-call median (round trip) and p50 / p99 over
all polls (wake-up).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# bench/mcp.py is named like the SDK's package: take this directory off the path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402
from agent_host_mcp.serving.root import open_root  # noqa: E402
from agent_host_mcp.serving.server import Served  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.shared.memory import create_client_server_memory_streams  # noqa: E402

from host.testing import build_host  # noqa: E402

BIN = Path(sys.executable).parent
FAULT_SERVER = ROOT / "plugins" / "mcp" / "tests" / "fault_server.py"


def environment(home: Path) -> dict[str, str]:
    """No model settings: the scripted model (nothing here calls it)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_HOST_", "OPENAI_"))}
    environ["AGENT_HOST_HOME"] = str(home)
    return environ


async def round_trips(params: StdioServerParameters, tool: str, args: dict[str, Any],
                      calls: int) -> float:
    """The median ms of ``calls`` calls of ``tool`` on a session already open."""
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            await session.call_tool(tool, args)  # warm
            times = []
            for _ in range(calls):
                start = time.perf_counter()
                result = await session.call_tool(tool, args)
                times.append((time.perf_counter() - start) * 1000)
                assert not result.is_error, result.content
    return statistics.median(times)


async def bench_round_trips(rounds: int, calls: int, directory: Path) -> None:
    serve = StdioServerParameters(
        command=str(BIN / "agent-host"),
        args=["--data-dir", str(directory / "data"), "mcp", "serve"],
        env=environment(directory / "home"), cwd=directory,
    )
    trivial = StdioServerParameters(command=sys.executable, args=[str(FAULT_SERVER)])
    ours, base = [], []
    for _ in range(rounds):
        ours.append(await round_trips(serve, "list_agents", {}, calls))
        base.append(await round_trips(trivial, "echo", {"text": "x"}, calls))
    print(f"round trip (ms per call; min / median of {rounds} round medians, {calls} calls each)")
    print(f"  mcp serve list_agents  {min(ours):7.3f} / {statistics.median(ours):7.3f}")
    print(f"  MCPServer echo         {min(base):7.3f} / {statistics.median(base):7.3f}")
    ratio = min(ours) / min(base), statistics.median(ours) / statistics.median(base)
    print(f"  ratio                  {ratio[0]:7.2f}× / {ratio[1]:.2f}×   (target ≤ 1.5×)")


async def bench_wake_up(polls: int, directory: Path) -> None:
    host = build_host(data_dir=directory / "poll")
    root = await open_root(host, "bench-root")
    served = Served(host, root)
    await served.start()
    acks: list[float] = []
    receipts: list[float] = []
    immediate: list[float] = []
    try:
        async with create_client_server_memory_streams() as (client, server), \
                anyio.create_task_group() as group:
            group.start_soon(served.server.run, server[0], server[1], served.options())
            async with ClientSession(client[0], client[1]) as session:
                await session.initialize()
                after: str | None = None
                for _ in range(polls):
                    after = await one_poll(session, root, after, acks, receipts, immediate)
            group.cancel_scope.cancel()
    finally:
        served.close()
        await host.aclose()
    added = [r - a for r, a in zip(receipts, acks, strict=True)]
    print(f"long-poll wake-up (ms from just before the append; p50 / p99 of {polls})")
    for name, values in (("append acknowledged", acks), ("read received", receipts),
                         ("received − acknowledged", added),
                         ("(a read not waiting)", immediate)):
        print(f"  {name:24} {percentile(values, 50):7.3f} / {percentile(values, 99):7.3f}")
    print("  target: p99 of received − acknowledged ≤ 5 ms")


async def one_poll(session: ClientSession, root: Any, after: str | None, acks: list[float],
                   receipts: list[float], immediate: list[float]) -> str:
    """One long poll woken by one appended report; its cursor."""
    received: list[float] = []

    async def poll() -> None:
        arguments: dict[str, Any] = {"wait_seconds": 10}
        if after is not None:
            arguments["after"] = after
        result = await session.call_tool("read_agent_messages", arguments)
        received.append(time.perf_counter())
        polled.append(result.structured_content["next"])

    polled: list[str] = []
    async with anyio.create_task_group() as group:
        group.start_soon(poll)
        await anyio.sleep(0.005)  # the poll is waiting
        source = {"kind": "subagent-report", "sender_session_id": "sub_bench"}
        start = time.perf_counter()
        await root.inbox.accept_async("inject", "Background subagent sub_bench reported:\nx",
                                      source)
        acks.append((time.perf_counter() - start) * 1000)
    receipts.append((received[0] - start) * 1000)
    start = time.perf_counter()  # the same read with nothing to wait for: its bare cost
    await session.call_tool("read_agent_messages", {"after": polled[0]})
    immediate.append((time.perf_counter() - start) * 1000)
    return polled[0]


def percentile(values: list[float], p: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--polls", type=int, default=500)
    args = parser.parse_args()
    print(f"python {platform.python_version()}, load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary)
        (directory / "home").mkdir()
        await bench_round_trips(args.rounds, args.calls, directory)
        await bench_wake_up(args.polls, directory)


if __name__ == "__main__":
    asyncio.run(main())
