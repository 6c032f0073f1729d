"""A real ``agent-host app-server --listen ws://127.0.0.1:0`` subprocess and clients of it."""

from __future__ import annotations

import contextlib
import json
import re
import signal
import threading
from pathlib import Path
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from tests.appserver.client import TIMEOUT, Message, Peer, Schemas, start_server

LISTENING = re.compile(r"listening on ws://[^ ]+:(\d+)")


class WsServer:
    """The server subprocess (``args``: more of its options), its port and its token (read
    from its stderr); ``listen`` may bind more than loopback (it is reached on 127.0.0.1)."""

    def __init__(
        self, cwd: Path, script: Path, schemas: Schemas, *args: str, listen: str = "ws://127.0.0.1:0"
    ) -> None:
        self.schemas = schemas
        self.process = start_server(cwd, "--listen", listen, *args, script=script)
        self.sockets = contextlib.ExitStack()
        self.stderr: list[str] = []
        self.port = 0
        assert self.process.stderr is not None
        for raw in self.process.stderr:
            line = raw.decode()
            self.stderr.append(line)
            found = LISTENING.search(line)
            if found:
                self.port = int(found.group(1))
                break
        assert self.port, "".join(self.stderr)
        self.token = (cwd / "home" / "app-server.token").read_text().strip()
        self.url = f"ws://127.0.0.1:{self.port}"

    def connect(self, token: str | None = None, **options: Any) -> ClientConnection:
        """A raw WebSocket connection with the token in the ``Authorization`` header."""
        headers = {"Authorization": f"Bearer {token or self.token}"}
        return connect(self.url, additional_headers=headers, open_timeout=TIMEOUT, **options)

    def client(self) -> WsPeer:
        """A protocol client over a new connection (closed by ``stop``)."""
        return WsPeer(self.sockets.enter_context(self.connect()), self.schemas)

    def kill(self) -> None:
        """Kill the server if it still runs (after a test)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=TIMEOUT)

    def stop(self) -> int:
        """Close the clients, SIGTERM the server; its exit code."""
        self.sockets.close()
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=TIMEOUT)


class WsPeer(Peer):
    """A protocol client over one WebSocket connection."""

    def __init__(self, socket: ClientConnection, schemas: Schemas | None) -> None:
        super().__init__(schemas)
        self.socket = socket
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for frame in self.socket:
                self._inbox.put(json.loads(frame))
        except ConnectionClosed:
            pass
        self._inbox.put(None)

    def send(self, message: Message) -> None:
        """Write one message (a text frame)."""
        self.socket.send(json.dumps(message))

    def disconnect(self) -> None:
        """Close the connection."""
        self.socket.close()
