"""End to end: ``agent-host dev`` in a subprocess prints the reload line after a file edit.

The plugin is a throwaway distribution on ``PYTHONPATH`` (a checkout, so "in development").
The watcher starts a moment after the process says what it watches, so the test saves the
file again until the line shows up; it asserts no latency (that is bench/reload.py's job).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from tests.distributions import write_distribution
from tests.lines import Lines, wait_for
from tests.reload.support import tools_source

TIMEOUT = 60.0


def test_dev_prints_the_reload_line_after_an_edit(tmp_path: Path) -> None:
    site = tmp_path / "site"
    module = f"devloop_{os.getpid()}"
    write_distribution(
        site,
        "devloop-plugin",
        entry_points={"devloop": module},
        modules={module: tools_source({"ping": "pong 0"})},
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_HOST_", "OPENAI_"))}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "host.cli.main", "dev", "--data-dir", str(tmp_path / "d")]
    dev = Lines(command, cwd=tmp_path, env=env)
    try:
        watching = wait_for(dev.err, "agent-host: watching", TIMEOUT)
        assert watching is not None and "devloop" in watching
        deadline = time.monotonic() + TIMEOUT
        line = None
        edit = 0
        while line is None and time.monotonic() < deadline:
            edit += 1
            (site / f"{module}.py").write_text(tools_source({"ping": f"pong {edit}"}))
            line = wait_for(dev.out, "reloaded devloop in ", 2.0)
        assert line is not None and line.endswith(" ms")
        dev.send("/exit\n")
        assert dev.process.wait(timeout=TIMEOUT) == 0
    finally:
        dev.kill()
