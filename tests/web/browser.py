"""A real headless browser for the web console's tests: Debian's ``chromium`` (its system
executable, never a downloaded one) driven by Playwright, against a real ``agent-host
app-server --listen ws://127.0.0.1:0 --web`` subprocess.

Without chromium the tests are skipped on a developer machine and fail under ``CI=true``
(``.ci/run`` installs it). Every page records what it printed to its console and any error it
raised; ``Console.quiet`` checks there was none. Screenshots go to ``ARTIFACTS``
(``$AGENT_HOST_TEST_ARTIFACTS/web``, else ``test-artifacts/web`` in the checkout).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.appserver.client import TIMEOUT, Schemas
from tests.appserver.conftest import project
from tests.appserver.websocket import WsServer

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
"""What chromium needs on these machines: no sandbox as root, and no background connections
(the closed network refuses them, many at a time)."""
CHECKOUT = Path(__file__).parents[2]
ARTIFACTS = Path(os.environ.get("AGENT_HOST_TEST_ARTIFACTS", CHECKOUT / "test-artifacts")) / "web"
CONSOLE_URL = re.compile(r"web console: (http://\S+)")


def require_chromium() -> str:
    """The chromium executable; skip without it, except under ``CI=true`` (a failure there)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("CI=true but chromium is not installed: the web console tests must run")
        pytest.skip("chromium is not installed (apt-get install chromium): no browser to test in")
    return found


class ConsoleServer(WsServer):
    """``app-server --listen ws://127.0.0.1:0 --web``, and the console URL it printed."""

    def __init__(self, cwd: Path, script: Path, schemas: Schemas) -> None:
        super().__init__(cwd, script, schemas, "--web")
        assert self.process.stderr is not None
        line = self.process.stderr.readline().decode()
        self.stderr.append(line)
        found = CONSOLE_URL.search(line)
        assert found, "".join(self.stderr)
        self.console = found.group(1)
        self.base = f"http://127.0.0.1:{self.port}/"

    def stop(self) -> int:
        """SIGTERM; the exit code."""
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=TIMEOUT)


class HeldAnswers:
    """Answers the server gave that the page has not been sent yet (``Console.holding``)."""

    def __init__(self, page: Any, hold: Callable[[dict[str, Any]], bool]) -> None:
        self.held: list[str] = []
        self._page = page
        self._hold = hold
        self._ids: set[Any] = set()
        self._sockets: list[Any] = []
        page.route_web_socket("**/*", self._route)

    def _route(self, socket: Any) -> None:
        up = socket.connect_to_server()
        self._sockets.append(socket)

        def from_page(message: Any) -> None:
            data = json.loads(message)
            if "method" in data and "id" in data and self._hold(data):
                self._ids.add(data["id"])
            up.send(message)

        def from_server(message: Any) -> None:
            data = json.loads(message)
            if "method" not in data and data.get("id") in self._ids:
                self._ids.discard(data["id"])
                self.held.append(message)
                return
            socket.send(message)

        socket.on_message(from_page)
        up.on_message(from_server)

    def wait(self, what: str) -> None:
        """Until an answer is held (the route's handlers run while the page is waited on)."""
        for _ in range(int(TIMEOUT * 10)):
            if self.held:
                return
            self._page.wait_for_timeout(100)
        raise AssertionError(f"{what} was not sent")

    def release(self) -> None:
        """Send the page the answer held last, on its newest socket."""
        self._sockets[-1].send(self.held.pop())


class Console:
    """One browser tab on the console; what it logged (``logged``) and raised (``raised``)."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.logged: list[str] = []
        self.raised: list[str] = []
        page.on("console", lambda message: self.logged.append(f"{message.type}: {message.text}"))
        page.on("pageerror", lambda error: self.raised.append(str(error)))
        page.set_default_timeout(TIMEOUT * 1000)

    def routed(self) -> list[Any]:
        """The page's sockets from now on, passed through to the server (the last one may be
        closed or sent to)."""
        sockets: list[Any] = []

        def route(socket: Any) -> None:
            sockets.append(socket)
            socket.connect_to_server()

        self.page.route_web_socket("**/*", route)
        return sockets

    def holding(self, hold: Callable[[dict[str, Any]], bool]) -> HeldAnswers:
        """The page's sockets from now on, passed through to the server but for the answers to
        the requests ``hold(request)`` picks, which are kept back until ``release``d."""
        return HeldAnswers(self.page, hold)

    def quiet(self) -> None:
        """No console message and no uncaught error so far."""
        assert self.logged == [] and self.raised == [], (self.logged, self.raised)

    def shot(self, name: str, selector: str | None = None, full: bool = False) -> Path:
        """A screenshot of the page (``full``: all of it, not just the viewport) or of the
        element ``selector``, saved as ``ARTIFACTS/<name>.png``."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        if selector is None:
            self.page.screenshot(path=str(path), full_page=full)
        else:
            self.page.locator(selector).screenshot(path=str(path))
        return path


@contextmanager
def browser() -> Iterator[Any]:
    """Headless chromium (a fresh profile directory each time), closed afterwards."""
    executable = require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        try:
            yield launched
        finally:
            launched.close()


def start(path: Path, script: dict[str, Any], schemas: Schemas, policy: str = "") -> ConsoleServer:
    """A console server over the project ``path`` answering from ``script`` (``policy``: more
    lines of its ``agent-host.toml``)."""
    return ConsoleServer(path, project(path, script, policy), schemas)
