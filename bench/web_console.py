"""Opening a big stored thread in the web console (``app-server --web``), in headless chromium.

A real ``agent-host app-server --listen ws://127.0.0.1:0 --web --script`` builds the thread
(a root that starts ``--children`` background subagents, then takes followups until its log
holds ``--items`` transcript items), and is stopped. A fresh server then serves it stored; the
console is opened in Debian's chromium (Playwright, the system executable) and the thread
clicked, ``--runs`` times (a page load each). The page itself times each open with the
browser's Performance API (``performance.measure``): from the click to the first frame drawn
after the tree was filled (``tree``), after the transcript's first page of 500 items was
(``transcript-first``: the oldest items, the page then goes on reading), and after the whole
transcript was (``transcript``).
The first open resumes the stored thread in the server; the later ones find it live.

Targets (issue): first paint of the transcript ≤ 1 s, of the tree ≤ 0.5 s.

    .venv/bin/python bench/web_console.py [--items N] [--children N] [--runs N]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import statistics
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

ROOT = Path(__file__).resolve().parent.parent
AGENT_HOST = str(ROOT / ".venv" / "bin" / "agent-host")
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


MEASURES = ["tree", "transcript-first", "transcript"]
"""The page's measures of an open: the tree drawn, the transcript's first page, all of it."""
OPENED = "() => performance.getEntriesByName('transcript').length > 0"
"""The page measured its open (a function: the page's policy forbids evaluating strings)."""


class Server:
    """``app-server --listen ws://127.0.0.1:0 --web`` over ``work``; its token and URLs."""

    def __init__(self, work: Path) -> None:
        env = {**os.environ, "AGENT_HOST_HOME": str(work / "home")}
        command = [AGENT_HOST, "--data-dir", str(work / "data"), "app-server", "--listen",
                   "ws://127.0.0.1:0", "--web", "--script", str(work / "script.json")]  # fmt: skip
        self.process = subprocess.Popen(command, stderr=subprocess.PIPE, cwd=work, env=env)
        assert self.process.stderr is not None
        self.console = ""
        for raw in self.process.stderr:
            found = re.search(r"web console: (\S+)", raw.decode())
            if found:
                self.console = found.group(1)
                break
        self.token = self.console.partition("#token=")[2]
        self.url = self.console.replace("http:", "ws:").partition("#")[0]

    def stop(self) -> None:
        """SIGTERM, and wait."""
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=60)


class Client:
    """A bare protocol client on a WebSocket."""

    def __init__(self, server: Server) -> None:
        headers = {"Authorization": f"Bearer {server.token}"}
        self.held = contextlib.ExitStack()
        self.socket: ClientConnection = self.held.enter_context(
            connect(server.url, additional_headers=headers, max_size=None, open_timeout=60)
        )
        self.next = 0
        self.call("initialize", {"clientInfo": {"name": "bench", "version": "1"}})
        self.socket.send(json.dumps({"method": "initialized"}))

    def call(self, method: str, params: dict[str, Any]) -> Any:
        """A request's result (notifications read meanwhile are dropped)."""
        self.next += 1
        self.socket.send(json.dumps({"id": self.next, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv(timeout=60))
            if message.get("id") == self.next and "method" not in message:
                assert "result" in message, message
                return message["result"]

    def until(self, method: str) -> None:
        """Read until a notification ``method``."""
        while json.loads(self.socket.recv(timeout=60)).get("method") != method:
            pass

    def items(self, thread: str) -> int:
        """How many transcript items the thread's log holds."""
        return len(self.call("thread/read", {"threadId": thread})["items"])


def build(work: Path, items: int, children: int) -> str:
    """The stored thread: ``children`` background subagents, followups up to ``items``."""
    calls = [{"name": "subagent", "arguments": {"description": f"c{i}", "prompt": "Work."}}
             for i in range(children)]  # fmt: skip
    script: dict[str, Any] = {"user": [{"text": "Starting.", "tool_calls": calls}]}
    script.update({f"c{i}": [f"Done {i}."] for i in range(children)})
    (work / "script.json").write_text(json.dumps(script))
    server = Server(work)
    client = Client(server)
    thread = str(client.call("thread/start", {})["thread"]["id"])
    text = [{"type": "text", "text": "Start them."}]
    client.call("turn/start", {"threadId": thread, "input": text})
    client.until("turn/completed")
    n = 0
    while (count := client.items(thread)) < items:
        for _ in range(max(1, (items - count) // 2)):
            n += 1
            text = [{"type": "text", "text": f"Followup {n}: anything new?"}]
            client.call("turn/start", {"threadId": thread, "input": text})
            client.until("turn/completed")
    print(f"built: {client.items(thread)} items, {children} children")
    client.held.close()
    server.stop()
    return thread


def measure(work: Path, thread: str, runs: int) -> list[dict[str, float]]:
    """Per run, the page's own ``tree`` and ``transcript`` measures (ms)."""
    from playwright.sync_api import sync_playwright

    server = Server(work)
    timings = []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=FLAGS)
            for _ in range(runs):
                page = browser.new_page(viewport={"width": 1440, "height": 900})
                page.goto(server.console)
                page.locator(f'#thread-list li[data-thread="{thread}"] button').click()
                page.wait_for_function(OPENED, timeout=60_000)
                timings.append(page.evaluate(
                    f"Object.fromEntries({json.dumps(MEASURES)}.map("
                    "n => [n, performance.getEntriesByName(n)[0].duration]))"
                ))  # fmt: skip
                shown = page.locator("#transcript > li").count()
                nodes = page.locator("#tree .node").count() - 1
                said = ", ".join(f"{name} {timings[-1][name]:.0f} ms" for name in MEASURES)
                print(f"run: {said} ({shown} rows, {nodes} children)")
                page.close()
            browser.close()
    finally:
        server.stop()
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--children", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        work = Path(directory)
        (work / "home").mkdir()
        thread = build(work, args.items, args.children)
        timings = measure(work, thread, args.runs)
    for name, target in zip(MEASURES, (500, 1000, 1000), strict=True):
        values = [t[name] for t in timings]
        print(f"{name}: first {values[0]:.0f} ms, median {statistics.median(values):.0f} ms, "
              f"max {max(values):.0f} ms (target ≤ {target} ms)")


if __name__ == "__main__":
    main()
