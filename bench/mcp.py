"""MCP plugin benchmark: server start, tool calls in turns, ten servers at once.

Not a test. Run from the project root with the project venv::

    .venv/bin/python bench/mcp.py [--rounds N] [--ten-rounds N] [--turns N]
                                  [--server fault|time] [--fsync never|turn]
                                  [--only start|calls|together|lazy]

Everything runs in one process, interleaved round by round, each measurement with its
baseline from the same run. The server is the plugin tests' ``fault_server.py`` (an SDK
``MCPServer`` over stdio; ``--server time`` uses the installed ``mcp-server-time`` for the
start measurements instead). Measured:

* **start, one server**: ``build_host`` with the ``mcp`` plugin and one
  ``[plugins.mcp.servers.<name>]`` entry, until it returns with the server's tools registered
  (then ``close``, timed apart). Baseline: the same server through the SDK alone —
  ``stdio_client`` + ``ClientSession`` + ``initialize`` + ``list_tools`` (then leaving both,
  timed apart). Also the same host with the ``mcp`` plugin and no server (the host's own
  start). Target: ≤ 1.2×.
* **tool call in a turn**: one agent turn on the scripted model — a call of ``<server>__echo``
  then ``say("ok")`` — from ``followup`` to ``wait_idle``, ``--turns`` turns per round on one
  agent (sessions in JSONL, ``--fsync`` policy, default ``never``: an ``fdatasync`` per turn
  end would be the same on both host turns and only add disk noise). Baseline: the SDK's
  ``call_tool("echo")`` on a session already open (tools listed), as many times. Also a turn
  calling an in-process ``echo`` tool in the same host (the host's per-turn overhead without
  MCP) and the plugin's ``ServerConnection.call_tool`` alone (its own SDK session on the MCP
  loop thread, awaited from this loop; no agent). Target: MCP turn ≤ 1.3 × bare call + local
  turn, i.e. (MCP turn − local turn) ÷ bare call ≤ 1.3.
* **ten servers**: ``build_host`` with ten entries of the same server until all tools are
  registered (then ``close``, timed apart), in the first ``--ten-rounds`` rounds. Baseline:
  the one-server host start of the same run. Also ten SDK sessions started concurrently on one
  event loop, kept open until all are ready (what the machine allows). Target: ≤ 1.5×.

* **read-only calls together**: one turn whose one step asks for four calls of the fault
  server's ``nap`` (0.5 s, annotated ``readOnlyHint``), against a turn with one such call.
  Target: four ÷ one ≤ 1.3.
* **lazy start**: ``agent-host sessions list`` as a process, with three fault servers
  configured, against the same with none. Target: ≤ 1.1.

Prints min and median over the rounds (ms; the turns also this process's CPU time per turn,
both threads) and the ratios of the mins and of the medians.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs

ROOT = Path(__file__).resolve().parent.parent
# This file is named like the SDK's package: take its directory off the path, or ``import mcp``
# would import this script again.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))

import agent_host_mcp  # noqa: E402
from agent_host_mcp.config import ServerSpec  # noqa: E402
from agent_host_mcp.connection import ServerConnection  # noqa: E402
from agent_host_mcp.loop import McpLoop  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from host import hookimpl  # noqa: E402
from host.agents import (  # noqa: E402
    ModelRequest,
    ModelResponse,
    ScriptedModel,
    call,
    calls,
    say,
    tool_call,
)
from host.app import Host  # noqa: E402
from host.testing import build_host  # noqa: E402
from host.tools import Tool, ToolExec, tool  # noqa: E402

FAULT_SERVER = ROOT / "plugins" / "mcp" / "tests" / "fault_server.py"
SERVERS: dict[str, dict[str, Any]] = {
    "fault": {"command": sys.executable, "args": [str(FAULT_SERVER)]},
    "time": {"command": str(Path(sys.executable).parent / "mcp-server-time")},
}
PLUGIN = ("mcp", agent_host_mcp)
# The fault server's ``bad_schema`` tool is skipped at every start with a warning (by design).
logging.getLogger("agent_host_mcp").setLevel(logging.ERROR)
TEN = 10


@attrs.frozen
class EchoArgs:
    text: str


@tool("echo", "Echo.", EchoArgs, concurrency_safe=True)
async def echo(args: EchoArgs, exec: ToolExec) -> str:
    return args.text


class LocalEcho:
    """A plugin offering the in-process ``echo`` tool (the no-MCP turn)."""

    @hookimpl
    def register_tools(self, register: Callable[[Tool], object]) -> None:
        register(echo)


def new_host(
    directory: Path, servers: dict[str, dict[str, Any]], *extra: Any, fsync: str = "turn"
) -> Host:
    """A started host with the ``mcp`` plugin and ``servers`` in a fresh data directory."""
    data = Path(tempfile.mkdtemp(dir=directory))
    config = {"plugins": {"mcp": {"servers": servers}, "session_persistence": {"fsync": fsync}}}
    return build_host(PLUGIN, *extra, data_dir=data, config=config)


def host_start(directory: Path, servers: dict[str, dict[str, Any]]) -> tuple[float, float]:
    """Seconds until ``build_host`` returns with every server's tools registered, and to close."""
    start = time.perf_counter()
    host = new_host(directory, servers)
    ready = time.perf_counter() - start
    rows = {row["name"]: row for row in host.plugin_rows()}
    for name in servers:
        row = rows[f"mcp.{name}"]
        assert row["state"] == "active" and row["tools"], f"mcp.{name}: {row}"
    start = time.perf_counter()
    host.close()
    return ready, time.perf_counter() - start


def sdk_params(definition: dict[str, Any]) -> StdioServerParameters:
    return StdioServerParameters(command=definition["command"], args=definition.get("args", []))


async def sdk_start(
    definition: dict[str, Any],
    ready_at: list[float] | None = None,
    hold: asyncio.Event | None = None,
) -> tuple[float, float]:
    """The SDK alone: seconds until initialized with its tools listed, and then to leave the
    session and the transport. With ``ready_at``/``hold`` (ten at once): append the ready
    time to ``ready_at`` and close only once ``hold`` is set."""
    start = time.perf_counter()
    with open(os.devnull, "w") as errlog:
        async with (
            stdio_client(sdk_params(definition), errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            listed = await session.list_tools()
            assert listed.tools
            ready = time.perf_counter() - start
            if ready_at is not None and hold is not None:
                ready_at.append(time.perf_counter())
                if len(ready_at) == TEN:
                    hold.set()
                await hold.wait()
            closing = time.perf_counter()
    return ready, time.perf_counter() - closing


async def sdk_ten(definition: dict[str, Any]) -> float:
    """Seconds until ten SDK sessions started concurrently on this loop are all initialized
    with their tools listed (all are kept open until then, then closed)."""
    ready_at: list[float] = []
    hold = asyncio.Event()
    start = time.perf_counter()
    await asyncio.gather(*(sdk_start(definition, ready_at, hold) for _ in range(TEN)))
    return max(ready_at) - start


def summary(
    label: str, seconds: list[float], cpu: list[float] | None = None
) -> tuple[float, float]:
    """Print min and median of ``seconds`` in ms (and the median of ``cpu``); return both."""
    low, mid = min(seconds) * 1e3, statistics.median(seconds) * 1e3
    extra = "" if cpu is None else f"   cpu {statistics.median(cpu) * 1e3:6.3f} ms"
    print(f"  {label:<48} min {low:9.3f} ms   median {mid:9.3f} ms{extra}")
    return low, mid


def ratio(
    text: str,
    part: tuple[float, float],
    whole: tuple[float, float],
    paired: list[float] | None = None,
) -> None:
    """Print ``part`` / ``whole`` on the mins and on the medians (and the median of the
    per-round ratios ``paired``, steadier on a loaded machine)."""
    line = f"  {text}: {part[0] / whole[0]:.3g} (min), {part[1] / whole[1]:.3g} (median)"
    if paired:
        line += f", {statistics.median(paired):.3g} (median of per-round ratios)"
    print(line)


async def timed_turns(agent: Any, turns: int) -> tuple[float, float]:
    """Seconds per turn over ``turns`` turns of ``agent``: wall, and this process's CPU."""
    start, cpu = time.perf_counter(), time.process_time()
    for index in range(turns):
        agent.followup(f"task {index}")
        await agent.wait_idle()
    return (time.perf_counter() - start) / turns, (time.process_time() - cpu) / turns


async def timed_calls(
    call_once: Callable[[], Awaitable[object]], calls: int
) -> tuple[float, float]:
    """Seconds per call over ``calls`` sequential calls: wall, and this process's CPU."""
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(calls):
        await call_once()
    return (time.perf_counter() - start) / calls, (time.process_time() - cpu) / calls


class Answers:
    """The scripted model's answer to every request: call ``tool`` after a user message,
    ``say("ok")`` after its result."""

    def __init__(self) -> None:
        self.tool = "echo"

    def __call__(self, request: ModelRequest) -> ModelResponse:
        if request.messages[-1].role == "tool":
            return say("ok")
        return call(self.tool, text="hi")


async def bench_start(
    directory: Path, definition: dict[str, Any], rounds: int, ten_rounds: int
) -> None:
    """One server: host start vs the SDK alone (and the host without servers); ten servers in
    the host vs one, and vs ten SDK sessions (the first ``ten_rounds`` rounds)."""
    host_start(directory, {"s": definition})  # warm-up: imports, bytecode, page cache
    await sdk_start(definition)
    keys = ("host", "host close", "sdk", "sdk close", "bare", "ten", "ten close", "sdk ten")
    cpu: dict[str, list[float]] = {"host": [], "sdk": []}
    times: dict[str, list[float]] = {key: [] for key in keys}
    ten = {f"s{n}": definition for n in range(TEN)}
    for index in range(rounds):
        for side in ("host", "sdk") if index % 2 == 0 else ("sdk", "host"):
            used = time.process_time()
            if side == "host":
                ready, closed = host_start(directory, {"s": definition})
            else:
                ready, closed = await sdk_start(definition)
            cpu[side].append(time.process_time() - used)
            times[side].append(ready)
            times[f"{side} close"].append(closed)
        times["bare"].append(host_start(directory, {})[0])
        if index >= ten_rounds:
            continue
        for side in ("host", "sdk") if index % 2 == 0 else ("sdk", "host"):
            if side == "host":
                ready, closed = host_start(directory, ten)
                times["ten"].append(ready)
                times["ten close"].append(closed)
            else:
                times["sdk ten"].append(await sdk_ten(definition))
    print(
        f"start: one stdio server, {rounds} rounds (ready = tools listed; close apart; "
        "cpu: this process, start and close)"
    )
    host = summary("host: build_host until tools registered", times["host"], cpu["host"])
    summary("host: close", times["host close"])
    sdk = summary("SDK alone: initialize + list_tools (baseline)", times["sdk"], cpu["sdk"])
    summary("SDK alone: leave session + transport", times["sdk close"])
    summary("host with the mcp plugin, no server", times["bare"])
    paired = [h / s for h, s in zip(times["host"], times["sdk"], strict=True)]
    ratio("host start / SDK alone (target <= 1.2)", host, sdk, paired)
    print(
        f"  host start - SDK alone: {host[0] - sdk[0]:.1f} ms (min), "
        f"{host[1] - sdk[1]:.1f} ms (median)"
    )
    if not ten_rounds:
        return
    print(f"ten servers at once, {min(rounds, ten_rounds)} rounds")
    host_ten = summary(f"host: build_host with {TEN} servers", times["ten"])
    summary("host: close", times["ten close"])
    sdk_all = summary(f"SDK alone: {TEN} sessions concurrently", times["sdk ten"])
    ratio("ten in the host / one in the host (target <= 1.5)", host_ten, host)
    ratio("ten SDK sessions / one SDK session (the machine)", sdk_all, sdk)
    paired = [h / s for h, s in zip(times["ten"], times["sdk ten"], strict=True)]
    ratio("ten in the host / ten SDK sessions", host_ten, sdk_all, paired)


async def bench_calls(
    directory: Path, definition: dict[str, Any], rounds: int, turns: int, fsync: str
) -> None:
    """A turn calling the MCP ``echo`` vs the SDK's bare ``call_tool``, with the local turn."""
    host = new_host(directory, {"fault": definition}, ("bench", LocalEcho()), fsync=fsync)
    model = host.services.models.resolve("scripted")
    assert isinstance(model, ScriptedModel)
    answers = Answers()
    model.answer_unscripted(answers)
    loop = McpLoop("bench-mcp")
    spec = ServerSpec(
        name="direct",
        transport="stdio",
        command=definition["command"],
        args=tuple(definition["args"]),
    )
    connection = ServerConnection(spec, loop)
    connection.wait_ready(30.0)

    async def direct() -> None:
        outcome = await connection.call_tool("echo", {"text": "hi"})
        assert outcome.text == "hi" and not outcome.is_error, outcome

    kinds = ("mcp", "local", "sdk", "connection")
    wall: dict[str, list[float]] = {key: [] for key in kinds}
    cpu: dict[str, list[float]] = {key: [] for key in kinds}
    with open(os.devnull, "w") as errlog:
        async with (
            stdio_client(sdk_params(definition), errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await session.list_tools()  # as the plugin does; the SDK caches output schemas

            async def bare() -> None:
                result = await session.call_tool("echo", {"text": "hi"})
                assert not result.is_error, result

            for index in range(rounds + 1):  # round 0 warms up
                measured: dict[str, tuple[float, float]] = {}
                for kind in ("mcp", "local"):
                    answers.tool = "fault__echo" if kind == "mcp" else "echo"
                    agent = await host.services.agents.create(label=kind)
                    measured[kind] = await timed_turns(agent, turns)
                    await agent.dispose()
                measured["sdk"] = await timed_calls(bare, turns)
                measured["connection"] = await timed_calls(direct, turns)
                if index > 0:
                    for kind, (seconds, used) in measured.items():
                        wall[kind].append(seconds)
                        cpu[kind].append(used)
    results = [r for r in model.requests if r.label == "mcp" and r.messages[-1].role == "tool"]
    assert results and all(r.messages[-1].content == "hi" for r in results), results[-1]
    connection.close()
    loop.close()
    await host.aclose()
    print(
        f"tool call: {rounds} rounds of {turns} turns or calls, per turn or call "
        f"(JSONL fsync={fsync}; cpu: this process, both threads)"
    )
    mcp = summary("turn calling fault__echo (MCP)", wall["mcp"], cpu["mcp"])
    local = summary("turn calling an in-process echo (no MCP)", wall["local"], cpu["local"])
    conn = summary("ServerConnection.call_tool alone", wall["connection"], cpu["connection"])
    sdk = summary("SDK call_tool on an open session (baseline)", wall["sdk"], cpu["sdk"])
    ratio("MCP turn / SDK call", mcp, sdk)
    extra = (mcp[0] - local[0], mcp[1] - local[1])
    paired = [
        (m - loc) / b for m, loc, b in zip(wall["mcp"], wall["local"], wall["sdk"], strict=True)
    ]
    ratio("(MCP turn - local turn) / SDK call (target <= 1.3)", extra, sdk, paired)
    ratio("ServerConnection.call_tool / SDK call", conn, sdk)


NAP = 0.5
"""Seconds each ``nap`` call of the read-only measurement sleeps."""


async def bench_together(directory: Path, definition: dict[str, Any], rounds: int) -> None:
    """A step of four read-only calls vs a step of one (the four run together)."""
    host = new_host(directory, {"fault": definition}, fsync="never")
    model = host.services.models.resolve("scripted")
    assert isinstance(model, ScriptedModel)
    times: dict[int, list[float]] = {1: [], 4: []}
    for index in range(rounds + 1):  # round 0 warms up
        for count in (1, 4) if index % 2 == 0 else (4, 1):
            naps = [tool_call("fault__nap", seconds=NAP) for _ in range(count)]
            model.script(f"nap{index}-{count}", calls(*naps), say("ok"))
            agent = await host.services.agents.create(label=f"nap{index}-{count}")
            start = time.perf_counter()
            agent.followup("go")
            await agent.wait_idle()
            if index > 0:
                times[count].append(time.perf_counter() - start)
    await host.aclose()
    print(f"read-only calls in one step: {rounds} rounds, nap of {NAP:g} s")
    one = summary("turn with one call", times[1])
    four = summary("turn with four calls in one step", times[4])
    ratio("four / one (target <= 1.3)", four, one)


def sessions_list(directory: Path, servers: int) -> float:
    """Seconds of ``agent-host sessions list`` with ``servers`` fault servers configured."""
    config = directory / f"servers{servers}.toml"
    config.write_text(
        "".join(
            f'[plugins.mcp.servers.s{n}]\ncommand = "{sys.executable}"\n'
            f'args = ["{FAULT_SERVER}"]\n'
            for n in range(servers)
        )
    )
    command = [str(Path(sys.executable).parent / "agent-host"), "--config", str(config)]
    start = time.perf_counter()
    data = str(directory / "data")
    subprocess.run(
        [*command, "--data-dir", data, "sessions", "list"], check=True, capture_output=True
    )
    return time.perf_counter() - start


def bench_lazy(directory: Path, rounds: int) -> None:
    """``sessions list`` with three servers configured vs none (none start)."""
    sessions_list(directory, 3)  # warm-up
    times: dict[int, list[float]] = {0: [], 3: []}
    for index in range(rounds):
        for servers in (0, 3) if index % 2 == 0 else (3, 0):
            times[servers].append(sessions_list(directory, servers))
    print(f"sessions list as a process: {rounds} rounds")
    none = summary("no server configured", times[0])
    three = summary("three servers configured", times[3])
    ratio("three / none (target <= 1.1)", three, none)


async def main() -> None:
    """Parse the options and run the measurements."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--ten-rounds", type=int, default=3)
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--server", choices=sorted(SERVERS), default="fault")
    parser.add_argument("--only", choices=("start", "calls", "together", "lazy"))
    parser.add_argument("--fsync", choices=("never", "turn"), default="never")
    args = parser.parse_args()
    print(f"python {platform.python_version()}, {os.cpu_count()} cpus, server {args.server}")
    with tempfile.TemporaryDirectory() as directory:
        os.environ["AGENT_HOST_HOME"] = str(Path(directory) / "home")
        began = time.perf_counter()
        if args.only in (None, "start"):
            await bench_start(Path(directory), SERVERS[args.server], args.rounds, args.ten_rounds)
        if args.only in (None, "calls"):
            await bench_calls(
                Path(directory), SERVERS["fault"], args.rounds, args.turns, args.fsync
            )
        if args.only in (None, "together"):
            await bench_together(Path(directory), SERVERS["fault"], args.rounds)
        if args.only in (None, "lazy"):
            bench_lazy(Path(directory), args.rounds)
        print(f"({time.perf_counter() - began:.0f} s)")


if __name__ == "__main__":
    asyncio.run(main())
