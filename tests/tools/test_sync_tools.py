"""Plain ``def`` tools run on the host's worker threads: blocking never stalls the loop."""

from __future__ import annotations

import asyncio
import threading

from host.agents.scripted import call, calls, say, tool_call
from host.agents.tool_results import INTERRUPTED_TOOL_TEXT
from host.sessions.model import MessageEvent, TurnEnd
from host.testing import HostHarness
from host.tools import ToolExec, tool
from tests.support import bodies

WAIT = 10.0
"""How long a blocked tool waits before giving up (a generous bound, met only on failure)."""


async def test_a_plain_tool_blocks_a_worker_thread_not_the_loop(harness: HostHarness) -> None:
    served = threading.Event()
    threads: list[str] = []

    @tool
    def wait_for_the_loop() -> str:
        """Block until the event loop served another task."""
        threads.append(threading.current_thread().name)
        return "served" if served.wait(WAIT) else "the loop was blocked"

    async def other_work() -> None:
        await asyncio.sleep(0)
        served.set()

    harness.add_tool(wait_for_the_loop)
    other = asyncio.create_task(other_work())
    result = await harness.call("wait_for_the_loop", {})
    await other

    assert result.text == "served"
    assert threads[0].startswith("agent-host-tool")


async def test_blocking_false_keeps_a_cheap_function_on_the_loop(harness: HostHarness) -> None:
    @tool(blocking=False)
    def where() -> bool:
        """Whether the tool runs on the event loop's thread."""
        return threading.current_thread() is threading.main_thread()

    harness.add_tool(where)
    assert (await harness.call("where", {})).text == "true"


async def test_a_plain_tool_taking_its_context_runs_on_the_loop(harness: HostHarness) -> None:
    @tool
    def where(exec: ToolExec) -> bool:
        """Whether the tool runs on the event loop's thread (its services are safe to use)."""
        assert exec.ctx.find("tool_workers") is not None
        return threading.current_thread() is threading.main_thread()

    harness.add_tool(where)
    assert (await harness.call("where", {})).text == "true"


async def test_blocking_true_puts_a_tool_taking_its_context_on_a_thread(
    harness: HostHarness,
) -> None:
    @tool(blocking=True)
    def where(exec: ToolExec) -> str:
        """The thread the tool runs on, and whether its call was cancelled."""
        return f"{threading.current_thread().name} {exec.signal.is_set()}"

    harness.add_tool(where)
    text = (await harness.call("where", {})).text
    assert text.startswith("agent-host-tool") and text.endswith(" False")


async def test_concurrency_safe_plain_tools_run_side_by_side(harness: HostHarness) -> None:
    barrier = threading.Barrier(2, timeout=WAIT)

    @tool(concurrency_safe=True)
    def meet() -> str:
        """Wait for the other call of the batch."""
        barrier.wait()
        return "met"

    harness.add_tool(meet)
    harness.model.script("w", calls(tool_call("meet"), tool_call("meet")), say("done"))
    agent = await harness.root("w")
    agent.followup("meet twice")
    await agent.wait_idle()

    tool_messages = [m for m in bodies(agent, MessageEvent) if m.role == "tool"]
    assert [(m.content, m.is_error) for m in tool_messages] == [("met", False), ("met", False)]


async def test_an_interrupt_ends_the_turn_at_once_and_drops_the_late_result(
    harness: HostHarness,
) -> None:
    entered, release, finished = threading.Event(), threading.Event(), threading.Event()

    @tool
    def stuck() -> str:
        """Block until released."""
        entered.set()
        release.wait(WAIT)
        finished.set()
        return "late result"

    harness.on_close(release.set)
    harness.add_tool(stuck)
    harness.model.script("w", call("stuck"), say("never asked"))
    agent = await harness.root("w")
    agent.followup("go")
    assert await asyncio.to_thread(entered.wait, WAIT)
    agent.interrupt()
    await asyncio.wait_for(agent.wait_idle(), WAIT)
    assert not finished.is_set()  # the turn ended while the thread still ran

    release.set()
    assert await asyncio.to_thread(finished.wait, WAIT)
    await asyncio.sleep(0.05)  # give a late result every chance to land
    tool_messages = [m for m in bodies(agent, MessageEvent) if m.role == "tool"]
    assert [(m.content, m.is_error) for m in tool_messages] == [(INTERRUPTED_TOOL_TEXT, True)]
    assert [end.stop_reason for end in bodies(agent, TurnEnd)] == ["interrupted"]
