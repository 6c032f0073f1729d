"""``agent-host app-server --listen ws://…``: several clients on one thread, a decision by one
announced to all, a request left open by a client that went away, the token (header or
subprotocol), the Origin check, the probes, and the loopback rule."""

from __future__ import annotations

import json
import queue
import re
import socket
import stat
import subprocess
import threading
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import InvalidStatus
from websockets.frames import Frame, Opcode
from websockets.sync.client import connect
from websockets.typing import Origin, Subprotocol

from host.appserver.websocket import ListenError, address, write_token
from tests.appserver.client import TIMEOUT, Schemas, environment, start_server, text
from tests.appserver.conftest import ASKING_ROOT_SCRIPT, TREE_SCRIPT, project
from tests.appserver.test_stdio import approve
from tests.appserver.websocket import WsPeer, WsServer
from tests.cli.support import AGENT_HOST


@pytest.fixture
def servers(tmp_path: Path, schemas: Schemas) -> Iterator[Callable[..., WsServer]]:
    """Start WebSocket servers in ``tmp_path``; each is killed after the test."""
    started: list[WsServer] = []

    def start(script: dict[str, Any]) -> WsServer:
        made = WsServer(tmp_path, project(tmp_path, script), schemas)
        started.append(made)
        return made

    yield start
    for server in started:
        server.kill()


def test_two_clients_on_one_thread_see_the_same_events_and_one_decision(servers) -> None:
    server = servers(TREE_SCRIPT)
    first, second = server.client(), server.client()
    first.initialize(approvals=True)
    second.initialize(approvals=True)
    thread_id = first.call("thread/start")["thread"]["id"]
    assert second.call("thread/resume", {"threadId": thread_id})["thread"]["id"] == thread_id
    first.answer = approve  # the second is asked too, and never answers
    first.call("turn/start", {"threadId": thread_id, "input": text("go")})
    for client in (first, second):
        client.notification("item/completed", type="subagentSettled")
        client.notification("turn/completed")
    assert [m["params"] for m in first.notifications()] == [
        m["params"] for m in second.notifications()
    ]
    asked = [m for m in second.seen if m.get("method") == "approval/request"]
    assert len(asked) == 1
    decided = second.notifications("approval/decided")
    assert [d["params"]["decision"] for d in decided] == ["approved"]
    assert decided[0]["params"]["requestId"] == asked[0]["params"]["requestId"]
    assert server.stop() == 143


def test_a_request_left_open_by_a_client_that_left_is_asked_of_the_next(servers) -> None:
    server = servers(ASKING_ROOT_SCRIPT)
    first = server.client()
    first.initialize(approvals=True)
    thread_id = first.call("thread/start")["thread"]["id"]
    first.call("turn/start", {"threadId": thread_id, "input": text("go")})
    asked = first.asked()
    first.disconnect()
    second = server.client()
    second.initialize(approvals=True)
    second.call("thread/resume", {"threadId": thread_id})
    again = second.asked()
    assert again["params"]["requestId"] == asked["params"]["requestId"]
    second.reply(again, {"decision": "approveForSession"})
    second.notification("turn/completed")
    decided = second.notifications("approval/decided")
    assert [d["params"]["decision"] for d in decided] == ["approved_for_session"]


def test_a_token_is_required_a_foreign_origin_refused_and_probes_are_open(
    servers, tmp_path
) -> None:
    server = servers(TREE_SCRIPT)
    token_file = tmp_path / "home" / "app-server.token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert sum(server.token in line for line in server.stderr) == 1
    for token in ("wrong", server.token[:-1]):
        with pytest.raises(InvalidStatus) as refused:
            server.connect(token=token)
        assert refused.value.response.status_code == 401
    with pytest.raises(InvalidStatus) as bare:
        connect(server.url, open_timeout=TIMEOUT)
    assert bare.value.response.status_code == 401
    with pytest.raises(InvalidStatus) as foreign:
        server.connect(origin=Origin("http://evil.example"))
    assert foreign.value.response.status_code == 403

    own = Origin(f"http://127.0.0.1:{server.port}")
    offered = [Subprotocol("agent-host.v1"), Subprotocol(f"agent-host.token.{server.token}")]
    with connect(server.url, origin=own, subprotocols=offered, open_timeout=TIMEOUT) as browser:
        assert browser.subprotocol == "agent-host.v1"
    with pytest.raises(InvalidStatus) as token_alone:  # a browser would drop the answer
        connect(server.url, origin=own, subprotocols=offered[1:], open_timeout=TIMEOUT)
    assert token_alone.value.response.status_code == 400
    assert token_alone.value.response.body == b"offer agent-host.v1 beside the token\n"
    for probe in ("/readyz", "/healthz"):
        with urllib.request.urlopen(server.url.replace("ws:", "http:") + probe) as answer:
            assert (answer.status, answer.read()) == (200, b"ok\n")


def test_a_non_ascii_token_is_refused_quietly_and_bearer_is_any_case(servers) -> None:
    server = servers(TREE_SCRIPT)
    for token in ("éé", "\u00ff" + server.token[1:]):
        with pytest.raises(InvalidStatus) as refused:
            server.connect(token=token)
        assert refused.value.response.status_code == 401
    for scheme in ("bearer", "BEARER"):
        headers = {"Authorization": f"{scheme} {server.token}"}
        with connect(server.url, additional_headers=headers, open_timeout=TIMEOUT) as socket:
            socket.send('{"id": 1, "method": "models/list"}')
            assert json.loads(socket.recv(timeout=TIMEOUT))["error"]["code"] == -32002
    assert server.stop() == 143
    assert server.process.stderr is not None
    assert len(server.process.stderr.read().decode().splitlines()) <= 1


def test_the_token_file_replaces_a_link_and_never_writes_through_it(servers, tmp_path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("not the token's\n")
    elsewhere.chmod(0o644)
    (tmp_path / "home").mkdir()
    token_file = tmp_path / "home" / "app-server.token"
    token_file.symlink_to(elsewhere)
    server = servers(TREE_SCRIPT)
    assert elsewhere.read_text() == "not the token's\n"
    assert stat.S_IMODE(elsewhere.stat().st_mode) == 0o644
    found = token_file.lstat()
    assert stat.S_ISREG(found.st_mode) and stat.S_IMODE(found.st_mode) == 0o600
    assert token_file.read_text() == server.token + "\n"
    assert [p.name for p in token_file.parent.iterdir()] == ["app-server.token"]


def test_a_missing_home_is_made_private(tmp_path) -> None:
    token, path = write_token(tmp_path / "new" / "home")
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text() == token + "\n"


@pytest.mark.parametrize(
    ("listen", "said"),
    [
        ("ws://0.0.0.0:0", "refusing to listen on 0.0.0.0 (not loopback) without --allow-remote"),
        ("ws://example.com:80", "refusing to listen on example.com (not loopback) without "
         "--allow-remote"),
        ("ws://127.0.0.1", "cannot listen on 'ws://127.0.0.1': name a port (0 picks a free one)"),
        ("http://127.0.0.1:80", "cannot listen on 'http://127.0.0.1:80': use stdio:// or "
         "ws://HOST:PORT"),
    ],
)
def test_a_non_loopback_bind_needs_allow_remote(tmp_path, listen, said) -> None:
    result = subprocess.run(
        [AGENT_HOST, "--data-dir", str(tmp_path / "data"), "app-server", "--listen", listen],
        capture_output=True, text=True, timeout=TIMEOUT, env=environment(tmp_path / "home"),
    )
    assert (result.returncode, result.stdout, result.stderr) == (2, "", f"agent-host: error: {said}\n")
    assert not (tmp_path / "home" / "app-server.token").exists()


def test_a_name_is_resolved_and_every_address_must_be_loopback(monkeypatch) -> None:
    resolved = {"localhost": ["::1", "127.0.0.1"], "tricky": ["127.0.0.1", "192.0.2.7"]}

    def getaddrinfo(host: str, port: int, *args: Any, **kwargs: Any) -> list[Any]:
        return [(0, 0, 0, "", (found, port)) for found in resolved[host]]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    assert address("ws://localhost:0", False) == (["::1"], 0)  # one socket, one port
    assert address("ws://localhost:8765", False) == (["::1", "127.0.0.1"], 8765)
    with pytest.raises(ListenError) as refused:
        address("ws://tricky:0", False)
    assert refused.value.message == (
        "refusing to listen on tricky (not loopback) without --allow-remote"
    )
    assert address("ws://tricky:80", True) == (["127.0.0.1", "192.0.2.7"], 80)


def test_localhost_listens_on_the_address_it_names(tmp_path, schemas) -> None:
    script = project(tmp_path, TREE_SCRIPT)
    process = start_server(tmp_path, "--listen", "ws://localhost:0", script=script)
    try:
        assert process.stderr is not None
        line = ""
        for raw in process.stderr:  # the server runs until killed: a line says where
            line = raw.decode()
            if "listening" in line:
                break
        found = re.search(r"listening on ws://(\S+):(\d+)$", line)
        assert found, line
        host, port = found.groups()
        assert host in ("127.0.0.1", "[::1]")
        token = (tmp_path / "home" / "app-server.token").read_text().strip()
        headers = {"Authorization": f"Bearer {token}"}
        url = f"ws://{host}:{port}"
        with connect(url, additional_headers=headers, open_timeout=TIMEOUT) as socket_:
            socket_.send('{"id": 1, "method": "models/list"}')
            assert json.loads(socket_.recv(timeout=TIMEOUT))["id"] == 1
    finally:
        process.kill()
        process.wait(timeout=TIMEOUT)


def test_bad_frames_get_errors_and_the_connection_stays(servers) -> None:
    server = servers(TREE_SCRIPT)
    client = server.client()
    client.socket.send("{not json")
    assert client.expect(lambda m: "error" in m)["error"]["code"] == -32700
    client.socket.send('{"id": 1, "method": "x", "params": {"big": "' + "a" * (9 << 20) + '"}}')
    large = client.expect(lambda m: "error" in m)
    assert (large["id"], large["error"]["data"]["code"]) == (None, "TOO_LARGE")
    wide = '{"id": 2, "method": "x", "params": {"big": "' + "é" * (5 << 20) + '"}}'
    client.socket.send(wide)  # 5 Mi characters, 10 MiB of UTF-8: the bytes count
    wider = client.expect(lambda m: "error" in m)
    assert (wider["id"], wider["error"]["data"]["code"]) == (None, "TOO_LARGE")
    assert client.request("models/list")["error"]["code"] == -32002  # not initialized yet
    client.initialize()
    assert client.call("models/list")["default"] == "scripted"


def test_a_client_that_leaves_mid_request_leaves_the_server_up(servers) -> None:
    server = servers(TREE_SCRIPT)
    leaving = server.client()
    leaving.initialize()
    thread_id = leaving.call("thread/start")["thread"]["id"]
    for n in range(50):
        leaving.send({"jsonrpc": "2.0", "id": 100 + n, "method": "thread/read",
                      "params": {"threadId": thread_id}})
    leaving.disconnect()
    staying = server.client()
    staying.initialize()
    assert staying.call("thread/resume", {"threadId": thread_id})["thread"]["id"] == thread_id
    assert staying.call("models/list")["default"] == "scripted"
    assert server.process.poll() is None


def test_a_client_that_stops_reading_is_closed_and_the_server_stays(servers) -> None:
    server = servers({"user": ["noted"]})
    writer = WsPeer(server.sockets.enter_context(server.connect(max_size=None)), None)
    writer.initialize()
    thread_id = writer.call("thread/start")["thread"]["id"]
    writer.call("turn/start", {"threadId": thread_id, "input": text("x" * (7 << 20))})
    writer.notification("turn/completed")
    with socket.create_connection(("127.0.0.1", server.port), timeout=TIMEOUT) as idle:
        idle.sendall(
            f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            f"Sec-WebSocket-Version: 13\r\nAuthorization: Bearer {server.token}\r\n\r\n".encode()
        )
        head = b""
        while not head.endswith(b"\r\n\r\n"):  # the handshake's answer, byte by byte
            head += idle.recv(1)
        assert head.startswith(b"HTTP/1.1 101")
        info = {"clientInfo": {"name": "idle", "version": "1"}}
        messages = [{"id": 0, "method": "initialize", "params": info}, {"method": "initialized"}]
        messages += [
            {"id": n, "method": "thread/read", "params": {"threadId": thread_id}}
            for n in range(1, 31)  # about 210 MB of answers, none read
        ]
        for message in messages:
            frame = Frame(Opcode.TEXT, json.dumps(message).encode())
            idle.sendall(frame.serialize(mask=True, extensions=[]))
        stderr = server.process.stderr
        assert stderr is not None
        said: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=lambda: said.put(stderr.readline()), daemon=True).start()
        line = said.get(timeout=TIMEOUT).decode()
        assert line == "agent-host: a client left over 64 MiB of messages unread: closed\n"
    assert writer.call("models/list")["default"] == "scripted"
    assert server.process.poll() is None


def handshake(port: int, token: str, host: str, origin: str) -> str:
    """The status line answering a browser's upgrade sent to 127.0.0.1:``port`` with these
    ``Host`` and ``Origin`` headers (and the token offered as a subprotocol)."""
    request = (
        f"GET / HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        f"Sec-WebSocket-Protocol: agent-host.v1, agent-host.token.{token}\r\n"
        f"Origin: {origin}\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as raw:
        raw.sendall(request.encode())
        answer = raw.makefile("rb").readline()
    return answer.decode().strip()


def test_a_page_opened_at_the_machines_address_is_let_in_and_other_origins_are_not(
    tmp_path, schemas
) -> None:
    server = WsServer(
        tmp_path, project(tmp_path, TREE_SCRIPT), schemas, "--allow-remote", "--web",
        listen="ws://0.0.0.0:0",
    )  # fmt: skip
    try:
        assert f"listening on ws://0.0.0.0:{server.port}" in "".join(server.stderr)
        machine = f"192.0.2.7:{server.port}"  # how a browser elsewhere names this machine
        own = handshake(server.port, server.token, machine, f"http://{machine}")
        assert own == "HTTP/1.1 101 Switching Protocols"
        for host, origin in [
            (machine, "http://evil.example"),
            (machine, f"http://evil.example:{server.port}"),
            (machine, f"http://192.0.2.8:{server.port}"),
            (f"evil.example:{server.port}", f"http://{machine}"),
        ]:
            assert handshake(server.port, server.token, host, origin) == "HTTP/1.1 403 Forbidden"
        assert handshake(server.port, "wrong", machine, f"http://{machine}") == (
            "HTTP/1.1 401 Unauthorized"
        )
    finally:
        server.kill()
