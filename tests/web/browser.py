"""A real headless browser for the web console's tests: Debian's ``chromium`` (its system
executable, never a downloaded one) driven by Playwright, against a real ``agent-host
app-server --listen ws://127.0.0.1:0 --web`` subprocess.

Without chromium the tests are skipped on a developer machine and fail under ``CI=true``
(``.ci/run`` installs it). Every page records what it printed to its console and any error it
raised; ``Console.quiet`` checks there was none. Screenshots go to ``ARTIFACTS``
(``$AGENT_HOST_TEST_ARTIFACTS/web``, else ``test-artifacts/web`` in the checkout).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
from collections.abc import Iterator
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
