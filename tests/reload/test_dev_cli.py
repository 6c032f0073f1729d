"""End to end: ``agent-host dev`` in a subprocess prints the reload line after a file edit.

The plugin is a throwaway distribution on ``PYTHONPATH`` (a checkout, so "in development").
The watcher starts a moment after the process says what it watches, so the test saves the
file again until the line shows up; it asserts no latency (that is bench/reload.py's job).
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.distributions import write_distribution
from tests.reload.support import tools_source

TIMEOUT = 60.0


def reader(stream: object, lines: queue.Queue[str]) -> None:
    for line in iter(stream.readline, ""):  # type: ignore[attr-defined]
        lines.put(line)


def wait_for(lines: queue.Queue[str], needle: str, seconds: float) -> str | None:
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            return None
        if needle in line:
            return line.strip()
    return None


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
    process = subprocess.Popen(
        command,
        cwd=tmp_path,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out: queue.Queue[str] = queue.Queue()
    err: queue.Queue[str] = queue.Queue()
    threading.Thread(target=reader, args=(process.stdout, out), daemon=True).start()
    threading.Thread(target=reader, args=(process.stderr, err), daemon=True).start()
    try:
        watching = wait_for(err, "agent-host: watching", TIMEOUT)
        assert watching is not None and "devloop" in watching
        deadline = time.monotonic() + TIMEOUT
        line = None
        edit = 0
        while line is None and time.monotonic() < deadline:
            edit += 1
            (site / f"{module}.py").write_text(tools_source({"ping": f"pong {edit}"}))
            line = wait_for(out, "reloaded devloop in ", 2.0)
        assert line is not None and line.endswith(" ms")
        assert process.stdin is not None
        process.stdin.write("/exit\n")
        process.stdin.flush()
        assert process.wait(timeout=TIMEOUT) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
