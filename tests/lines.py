"""Reading a subprocess's output line by line while a test drives it (``agent-host dev``)."""

from __future__ import annotations

import queue
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path


class Lines:
    """A running command whose stdout and stderr lines are collected by reader threads."""

    def __init__(self, command: Sequence[str], *, cwd: Path, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.out: queue.Queue[str] = queue.Queue()
        self.err: queue.Queue[str] = queue.Queue()
        for stream, lines in ((self.process.stdout, self.out), (self.process.stderr, self.err)):
            threading.Thread(target=_read, args=(stream, lines), daemon=True).start()

    def send(self, text: str) -> None:
        """Write ``text`` to the command's standard input."""
        assert self.process.stdin is not None
        self.process.stdin.write(text)
        self.process.stdin.flush()

    def kill(self) -> None:
        """Kill the command if it still runs (a test's cleanup)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def _read(stream: object, lines: queue.Queue[str]) -> None:
    for line in iter(stream.readline, ""):  # type: ignore[attr-defined]
        lines.put(line)


def wait_for(lines: queue.Queue[str], needle: str, seconds: float) -> str | None:
    """The first line containing ``needle`` within ``seconds`` (stripped), else None."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            return None
        if needle in line:
            return line.strip()
    return None
