"""A test client driving a real ``agent-host app-server`` subprocess over stdio.

A thread reads stdout (one JSON message per line) into a queue; ``request`` sends and waits
for the response, keeping the notifications and server requests that come meanwhile in
``seen``; ``expect`` waits for the next message a predicate accepts. Server requests are
answered by ``answer`` (None: left unanswered). Every message read, and every answer to a
server request, is checked against the protocol's JSON Schema (``Schemas``) when one is given.
``text`` is the input of a turn that says a text.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.cli.support import AGENT_HOST

TIMEOUT = 60.0

Message = dict[str, Any]


def text(value: str) -> list[dict[str, str]]:
    """The ``input`` of a ``turn/start`` request saying ``value``."""
    return [{"type": "text", "text": value}]


def environment(home: Path) -> dict[str, str]:
    """The caller's environment without model settings, ``AGENT_HOST_HOME`` at ``home``."""
    from agent_host_openai.testing import ENV_VARS

    environ = {
        k: v for k, v in os.environ.items() if not k.startswith("AGENT_HOST_") and k not in ENV_VARS
    }
    environ["AGENT_HOST_HOME"] = str(home)
    return environ


class Schemas:
    """The JSON Schema files ``agent-host app-server schema`` wrote, as validators."""

    def __init__(self, directory: Path) -> None:
        from jsonschema import Draft202012Validator

        self.validators = {
            path.name.removesuffix(".json"): Draft202012Validator(json.loads(path.read_text()))
            for path in directory.glob("*.json")
        }
        self.checked: set[str] = set()

    def check(self, name: str, value: Any) -> None:
        """Validate ``value`` against the document ``name`` (raises when it does not fit)."""
        self.validators[name.replace("/", ".")].validate(value)
        self.checked.add(name)

    def message(self, message: Message, methods: dict[Any, str]) -> None:
        """Validate a message the server wrote (``methods``: request ids → methods)."""
        if "method" in message:
            self.check(f"{message['method']}.params", message["params"])
        elif "error" in message:
            self.check("error", message["error"])
        else:
            self.check(f"{methods[message['id']]}.result", message["result"])


def start_server(
    cwd: Path, *args: str, script: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """``agent-host --data-dir CWD/data app-server ARGS [--script SCRIPT]`` in ``cwd`` (with
    ``env`` added to the environment)."""
    command = [AGENT_HOST, "--data-dir", str(cwd / "data"), "app-server", *args]
    if script is not None:
        command += ["--script", str(script)]
    return subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env={**environment(cwd / "home"), **(env or {})},
    )


class Peer:
    """The client side of one connection: requests, answers, and the messages read."""

    def __init__(self, schemas: Schemas | None) -> None:
        self.schemas = schemas
        self.methods: dict[Any, str] = {}
        self.seen: list[Message] = []
        self.answer: Callable[[Message], Any] | None = None
        self._inbox: queue.Queue[Message | None] = queue.Queue()
        self._next_id = 0

    def send(self, message: Message) -> None:
        """Write one message."""
        raise NotImplementedError

    def notify(self, method: str, params: Any = None) -> None:
        """Send a notification."""
        self.send({"jsonrpc": "2.0", "method": method, **({"params": params} if params else {})})

    def numbered(self, method: str, params: Any = None) -> Message:
        """A request with the next id, remembered (for ``response`` and the schema)."""
        self._next_id += 1
        self.methods[self._next_id] = method
        return {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params or {}}

    def response(self, request_id: int) -> Message:
        """The response to the request ``request_id`` (seen already, else the next one)."""
        for message in self.seen:
            if message.get("id") == request_id and "method" not in message:
                return message
        return self.expect(lambda m: m.get("id") == request_id and "method" not in m)

    def request(self, method: str, params: Any = None) -> Message:
        """Send a request; its response (``result`` or ``error``)."""
        message = self.numbered(method, params)
        self.send(message)
        return self.response(message["id"])

    def call(self, method: str, params: Any = None) -> Any:
        """``request`` that must succeed: its result."""
        response = self.request(method, params)
        assert "result" in response, response
        return response["result"]

    def initialize(self, **capabilities: bool) -> Message:
        """The handshake."""
        result = self.call(
            "initialize",
            {"clientInfo": {"name": "tests", "version": "1"}, "capabilities": capabilities},
        )
        self.notify("initialized")
        return result

    def expect(self, accepts: Callable[[Message], bool], timeout: float = TIMEOUT) -> Message:
        """The next message ``accepts`` takes; every message read is kept in ``seen``."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                message = self._inbox.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no such message within {timeout}s") from None
            if message is None:
                raise AssertionError("the server closed its stdout")
            assert "not JSON on stdout" not in message, message
            if self.schemas is not None:
                self.schemas.message(message, self.methods)
            self.seen.append(message)
            if "method" in message and "id" in message and self.answer is not None:
                reply = self.answer(message)
                if reply is not None:
                    self.reply(message, reply)
            if accepts(message):
                return message

    def asked(self, method: str = "approval/request") -> Message:
        """The server's first request ``method``: seen already (it may come before the
        response of the request that caused it), else the next one."""
        for message in self.seen:
            if message.get("method") == method and "id" in message:
                return message
        return self.expect(lambda m: m.get("method") == method and "id" in m)

    def notification(self, method: str, **where: Any) -> Message:
        """The next notification ``method`` whose params (or their item) match ``where``."""

        def accepts(message: Message) -> bool:
            if message.get("method") != method or "id" in message:
                return False
            params = message["params"]
            return all(params.get(k, params.get("item", {}).get(k)) == v for k, v in where.items())

        return self.expect(accepts)

    def reply(self, request: Message, result: Any) -> None:
        """Answer the server's ``request`` with ``result`` (checked against its schema)."""
        if self.schemas is not None:
            self.schemas.check(f"{request['method']}.result", result)
        self.send({"jsonrpc": "2.0", "id": request["id"], "result": result})

    def notifications(self, method: str | None = None) -> list[Message]:
        """The notifications seen so far (of ``method``)."""
        return [
            m for m in self.seen
            if "id" not in m and "method" in m and (method is None or m["method"] == method)
        ]



class Client(Peer):
    """One app-server subprocess over stdio and the messages it wrote."""

    def __init__(
        self,
        cwd: Path,
        *args: str,
        script: Path | None = None,
        schemas: Schemas | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        super().__init__(schemas)
        self.process = start_server(cwd, *args, script=script, env=env)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                self._inbox.put(json.loads(line))
            except ValueError:
                self._inbox.put({"not JSON on stdout": line.decode(errors="replace")})
        self._inbox.put(None)

    def send_raw(self, data: bytes) -> None:
        """Write bytes to the server's stdin."""
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: Message) -> None:
        """Write one message (a line)."""
        self.send_raw(json.dumps(message).encode() + b"\n")

    def begin_at_once(self, *requests: tuple[str, Any]) -> list[int]:
        """Send requests ``(method, params)`` in one write, so the server reads them together
        and runs them at once: their ids."""
        messages = [self.numbered(method, params) for method, params in requests]
        self.send_raw(b"".join(json.dumps(message).encode() + b"\n" for message in messages))
        return [int(message["id"]) for message in messages]

    def close(self) -> tuple[int, str]:
        """Close stdin; the exit code and stderr."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        code = self.process.wait(timeout=TIMEOUT)
        assert self.process.stderr is not None
        return code, self.process.stderr.read().decode()

    def kill(self) -> None:
        """SIGKILL the server."""
        self.process.kill()
        self.process.wait(timeout=TIMEOUT)
