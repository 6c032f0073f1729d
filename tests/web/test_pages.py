"""The console's files without a browser: served with ``--web`` on the WebSocket's port (no
token needed for the files, still needed for the socket), absent without it, refused on
stdio, and shipped in a wheel built from the checkout."""

from __future__ import annotations

import subprocess
import sys
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

import pytest
from websockets.exceptions import InvalidStatus

from tests.appserver.client import TIMEOUT, environment
from tests.appserver.conftest import TREE_SCRIPT
from tests.appserver.websocket import WsServer
from tests.cli.support import AGENT_HOST
from tests.support import in_checkout
from tests.web.browser import CHECKOUT

FILES = [
    "composer.js", "console.css", "dialogs.js", "dom.js", "index.html", "main.js", "rpc.js",
    "threads.js", "transcript.js", "tree.js",
]


def get(url: str) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body of a plain GET."""
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_the_pages_are_served_with_web_and_the_socket_still_needs_the_token(servers) -> None:
    server = servers(TREE_SCRIPT)
    assert server.console == f"http://127.0.0.1:{server.port}/#token={server.token}"
    assert sum("web console:" in line for line in server.stderr) == 1
    assert sum(server.token in line for line in server.stderr) == 1  # printed once: the URL
    status, headers, body = get(server.base)
    assert status == 200 and body.startswith(b"<!doctype html>")
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    assert headers["X-Content-Type-Options"] == "nosniff"
    status, headers, body = get(server.base + "main.js")
    assert (status, headers["Content-Type"]) == (200, "text/javascript; charset=utf-8")
    assert server.token.encode() not in body
    assert get(server.base + "nothing.js")[0] == 404
    with pytest.raises(InvalidStatus) as refused:
        server.connect(token="wrong")
    assert refused.value.response.status_code == 401
    assert server.client().initialize()["protocolVersion"] == "1"


def test_without_web_there_are_no_pages(tmp_path: Path, schemas) -> None:
    from tests.appserver.conftest import project

    server = WsServer(tmp_path, project(tmp_path, TREE_SCRIPT), schemas)
    try:
        assert get(f"http://127.0.0.1:{server.port}/")[0] == 401
        assert not any("web console" in line for line in server.stderr)
    finally:
        assert server.stop() == 143


def test_web_on_stdio_is_one_line_and_an_exit(tmp_path: Path) -> None:
    result = subprocess.run(
        [AGENT_HOST, "--data-dir", str(tmp_path / "data"), "app-server", "--web"],
        capture_output=True, text=True, timeout=TIMEOUT, env=environment(tmp_path / "home"),
    )  # fmt: skip
    said = "agent-host: error: --web needs --listen ws://HOST:PORT\n"
    assert (result.returncode, result.stdout, result.stderr) == (2, "", said)


@in_checkout
def test_a_wheel_built_from_the_checkout_ships_the_console(tmp_path: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path), str(CHECKOUT)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("agent_host_core-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert sorted(n.rpartition("/")[2] for n in names if "host/appserver/web/" in n) == FILES
