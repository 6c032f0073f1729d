"""Reading a subprocess's output line by line while a test drives it (``agent-host dev``)."""

from __future__ import annotations

import codecs
import queue
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path


class Lines:
    """A running command whose stdout and stderr lines are collected by reader threads.

    With ``prompt``, stdout output that stops at an unterminated ``prompt`` (the command now
    waits for input) is a line of its own: ``wait_for(lines.out, prompt, …)`` sees it.
    """

    def __init__(
        self, command: Sequence[str], *, cwd: Path, env: dict[str, str], prompt: str | None = None
    ) -> None:
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
        readers = ((self.process.stdout, self.out, prompt), (self.process.stderr, self.err, None))
        for stream, lines, waits in readers:
            threading.Thread(target=_read, args=(stream, lines, waits), daemon=True).start()

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


def _read(stream: object, lines: queue.Queue[str], prompt: str | None) -> None:
    """Put each line of ``stream`` as it arrives, and a pending ``prompt`` (see ``Lines``)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    pending = ""
    while chunk := stream.buffer.read1(4096):  # type: ignore[attr-defined]
        *complete, pending = (pending + decoder.decode(chunk)).split("\n")
        for line in complete:
            lines.put(line + "\n")
        if prompt and pending.endswith(prompt):
            lines.put(pending)
            pending = ""
    if pending:
        lines.put(pending)


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
