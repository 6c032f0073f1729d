"""A plain tool still running never holds the process: its thread is abandoned at exit."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from host.tools.workers import ToolWorkers

EXIT_WITHIN = 30.0
"""A generous bound on the process's exit; the stuck tool sleeps twice as long."""

SCRIPT = textwrap.dedent(
    """
    import asyncio, sys, threading, time
    from pathlib import Path

    from host.harness import HostHarness
    from host.tools import ToolExec, tool

    entered = threading.Event()

    @tool
    def sleeper() -> str:
        \"\"\"Sleep a minute.\"\"\"
        entered.set()
        time.sleep(60)
        return "woke"

    async def main(where: str) -> int:
        harness = HostHarness(data_dir=Path(sys.argv[2]))
        harness.add_tool(sleeper)
        if where == "host":
            call = asyncio.ensure_future(harness.call("sleeper", {}))
        else:  # a tool run without a host's services
            call = asyncio.ensure_future(sleeper.execute({}, ToolExec(None, None)))
        while not entered.is_set():
            await asyncio.sleep(0.01)
        call.cancel()
        await harness.close()
        print("closed", flush=True)
        return 3

    sys.exit(asyncio.run(main(sys.argv[1])))
    """
)


@pytest.mark.parametrize("where", ["host", "no host"])
def test_a_process_exits_at_once_while_a_plain_tool_still_sleeps(
    tmp_path: Path, where: str
) -> None:
    script = tmp_path / "stuck.py"
    script.write_text(SCRIPT)
    done = subprocess.run(
        [sys.executable, str(script), "host" if where == "host" else "none", str(tmp_path / "d")],
        capture_output=True,
        text=True,
        timeout=EXIT_WITHIN,
        cwd=Path(__file__).parents[2],
    )
    assert (done.returncode, done.stdout, done.stderr) == (3, "closed\n", "")


async def test_a_closed_pool_refuses_new_work_and_cancels_what_waits() -> None:
    workers = ToolWorkers(size=1)
    started, release = threading.Event(), threading.Event()

    def hold() -> bool:
        started.set()
        return release.wait(EXIT_WITHIN)

    running = workers.submit(hold, {})
    assert started.wait(EXIT_WITHIN)
    waiting = workers.submit(str, {})

    assert workers.close() == 1  # the running call is abandoned, the waiting one cancelled
    assert waiting.cancelled()
    with pytest.raises(RuntimeError, match="the host's tool workers are closed"):
        workers.submit(str, {})
    release.set()
    assert running.result(EXIT_WITHIN) is True
