"""Host overhead per agent turn, against a bare asyncio loop doing the same calls.

Every turn is one user message, a model call that asks for one tool call, the tool, and a
second model call that answers. Both sides use the same fake model function and the same tool
coroutine; the bare loop keeps the conversation in a plain list. The host side runs the real
``Agent`` (inbox, driver, session log, ``run_tool`` with argument validation) on

* an in-memory ``SessionStore`` (no persistence),
* the same with the ``approvals`` service in place (default policy; the tool needs no
  approval, so every call meets ``check`` and runs): its cost over the row above is what
  approvals add to a call that needs nobody's consent (the aim: under 5 %). These
  two rows alternate ``--rounds`` times and each shows its best round, so a noisy machine
  does not decide the comparison; and
* JSONL persistence in a temporary directory (fsync policy ``never`` and ``turn``).

A last row is the longest event-loop stall while a plain ``def`` tool sleeps 1 s (as blocking
I/O would), best of ``--rounds``: on the host's worker threads (target under 5 ms), next to the
loop alone for 1 s (the machine's preemption) and the tool inline (``blocking=False``).

Work is ``AGENTS`` conversations of ``TURNS`` turns each (so a model call sees at most
``TURNS`` turns of history, as in a real session between compactions).

    .venv/bin/python bench/turns.py [--turns-per-agent N] [--agents N]
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import tempfile
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import attrs

from host.agents import Agent, ModelRequest, ModelResponse, SectionView, section_registry
from host.approvals.policy import Policy
from host.approvals.service import ApprovalService
from host.cancel import CancelSignal
from host.sessions.jsonl import FsyncPolicy, JsonlPersistence
from host.sessions.model import MessageEvent, SessionHeader, ToolCall
from host.sessions.projections import Projections
from host.sessions.store import SessionStore
from host.tools import Tool, ToolExec, tool
from host.tools.execute import run_tool
from host.tools.scope import ToolView, tool_registry
from host.tools.tool import ToolExec as EngineExec
from host.tools.workers import SERVICE, ToolWorkers

CALL = ModelResponse(tool_calls=(ToolCall("c1", "echo", {"text": "hi"}),), stop_reason="tool_use")
ANSWER = ModelResponse(text="done")


def fake_model(messages: Any) -> ModelResponse:
    """The shared fake model: call the tool after a user message, answer after its result."""
    return ANSWER if messages[-1].role == "tool" else CALL


@attrs.frozen
class EchoArgs:
    text: str


async def echo_body(text: str) -> str:
    """The shared tool coroutine."""
    return text


@tool("echo", "Echo.", EchoArgs, concurrency_safe=True)
async def echo(args: EchoArgs, exec: ToolExec) -> str:
    return await echo_body(args.text)


class FakeModel:
    """``fake_model`` behind the ``Model`` protocol."""

    async def complete(self, request: ModelRequest, *, signal: CancelSignal) -> ModelResponse:
        return fake_model(request.messages)


async def bare(agents: int, turns: int) -> float:
    """The baseline: the same calls in a plain loop over a plain list; seconds taken."""
    start = time.perf_counter()
    for _ in range(agents):
        messages: list[MessageEvent] = []
        for index in range(turns):
            messages.append(MessageEvent(role="user", content=f"task {index}"))
            while True:
                response = fake_model(messages)
                messages.append(
                    MessageEvent("assistant", response.text, tool_calls=response.tool_calls)
                )
                if not response.tool_calls:
                    break
                for each in response.tool_calls:
                    text = await echo_body(each.arguments["text"])
                    messages.append(MessageEvent("tool", text, tool_call_id=each.id))
    return time.perf_counter() - start


class WithApprovals:
    """The services the bench's agents look up: ``approvals``, with the default policy (and
    the host's ``tool_workers`` for the loop-stall row)."""

    def __init__(self) -> None:
        self.services: dict[str, Any] = {
            "approvals": ApprovalService(Policy(), lambda agent_id: None)
        }

    def find(self, name: str) -> Any:
        return self.services.get(name)


async def hosted(store: SessionStore, agents: int, turns: int, ctx: Any = None) -> float:
    """The same work through real agents on ``store`` (services ``ctx``); seconds taken."""
    tools = tool_registry()
    tools.register("echo", echo, owner="bench")
    model = FakeModel()
    start = time.perf_counter()
    for n in range(agents):
        session = store.new(SessionHeader(id=f"bench-{n}"))
        store.publish(session)
        agent = Agent(session, model, ToolView(tools), SectionView(section_registry()), ctx=ctx)
        for index in range(turns):
            agent.followup(f"task {index}")
            await agent.wait_idle()
        await agent.dispose()
        store.release(session.id)
    return time.perf_counter() - start


def jsonl_store(directory: Path, fsync: FsyncPolicy) -> SessionStore:
    return SessionStore(JsonlPersistence(directory, fsync=fsync), Projections())


async def alternated(agents: int, turns: int, rounds: int) -> tuple[float, float]:
    """The in-memory runs without and with approvals, alternated ``rounds`` times: the best
    seconds of each."""
    best = [float("inf"), float("inf")]
    for _ in range(max(1, rounds)):
        for index, ctx in enumerate((None, WithApprovals())):
            seconds = await hosted(SessionStore(None, None), agents, turns, ctx)
            best[index] = min(best[index], seconds)
    return best[0], best[1]


def napping(blocking: bool) -> Tool:
    """A plain tool sleeping 1 s, on a worker thread (``blocking``) or on the loop."""

    def nap() -> str:
        """Sleep a second, as blocking I/O would."""
        time.sleep(1.0)
        return "rested"

    return tool(nap, blocking=blocking)


async def loop_stall(blocking: bool | None) -> float:
    """The longest time (ms) between two turns of the event loop while ``napping(blocking)``
    runs on a host's workers; with ``blocking=None``, while the loop just sleeps 1 s (the
    machine's own preemption, the floor of the other two)."""
    workers = ToolWorkers()
    services = WithApprovals()
    services.services[SERVICE] = workers
    ctx: Any = services  # ToolExec's ctx, as in ``hosted``
    running = True
    longest = 0.0

    async def watch() -> None:
        nonlocal longest
        last = time.perf_counter()
        while running:
            await asyncio.sleep(0)
            now = time.perf_counter()
            longest, last = max(longest, now - last), now

    watcher = asyncio.create_task(watch())
    await asyncio.sleep(0)
    if blocking is None:
        await asyncio.sleep(1.0)
    else:
        nap = napping(blocking)
        nap.declare()
        await run_tool(nap, "nap", {}, EngineExec(agent=None, ctx=ctx))  # no agent: the engine's
    running = False
    await watcher
    workers.close()
    return longest * 1e3


async def best_stall(blocking: bool | None, rounds: int) -> float:
    """``loop_stall`` at its best of ``rounds`` (a noisy machine preempts any one round)."""
    return min([await loop_stall(blocking) for _ in range(max(1, rounds))])


async def measure(label: str, run: Callable[[], Awaitable[float]], total: int) -> float:
    return show(label, await run(), total)


def show(label: str, seconds: float, total: int) -> float:
    """Print one row; its µs per turn."""
    per_turn = seconds / total * 1e6
    print(f"{label:<34} {per_turn:9.1f} µs/turn  ({seconds:.2f} s)")
    return per_turn


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=100)
    parser.add_argument("--turns-per-agent", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    agents, turns = args.agents, args.turns_per_agent
    total = agents * turns
    print(f"{total} turns ({agents} agents x {turns}); python {platform.python_version()}")
    base = await measure("bare asyncio loop", lambda: bare(agents, turns), total)
    plain, gated = await alternated(agents, turns, args.rounds)
    memory = show("Agent, in-memory store (best)", plain, total)
    results = {"in-memory": memory}
    results["in-memory+approvals"] = show("Agent, in-memory, approvals (best)", gated, total)
    policies: tuple[FsyncPolicy, ...] = ("never", "turn")
    for fsync in policies:
        with tempfile.TemporaryDirectory() as directory:
            store = jsonl_store(Path(directory), fsync)
            results[f"jsonl fsync={fsync}"] = await measure(
                f"Agent, JSONL fsync={fsync}", partial(hosted, store, agents, turns), total
            )
    for name, per_turn in results.items():
        print(f"ratio {name:<20} {per_turn / base:7.1f}x  (+{per_turn - base:.1f} µs/turn)")
    extra = results["in-memory+approvals"] / memory - 1
    print(f"approvals, no tool needs one: {extra:+.1%} per turn over in-memory")
    floor, threaded, inline = [await best_stall(b, args.rounds) for b in (None, True, False)]
    print(f"longest loop stall, sync tool sleeping 1 s: {threaded:.2f} ms on worker threads")
    print(f"  (no tool, the loop alone for 1 s: {floor:.2f} ms; blocking=False: {inline:.0f} ms)")


if __name__ == "__main__":
    asyncio.run(main())
