"""Fixtures the MCP tests share: a free port, server processes awaited until they listen (and
killed at the end), and a scripted turn's tool messages."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

import pytest

Listening = Callable[..., subprocess.Popen[bytes]]
Turn = Callable[..., Awaitable[tuple[Any, list[Any]]]]


@pytest.fixture
def port() -> int:
    """A TCP port on loopback that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def listening() -> Iterator[Listening]:
    """``listening(command, port, env=None)``: ``command`` started (output discarded) and
    returned once it accepts connections on ``port`` (bounded: 20 s); killed at the end."""
    started: list[subprocess.Popen[bytes]] = []

    def start(
        command: list[str], port: int, env: Mapping[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        started.append(process)
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                return process
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, "server not up"
                time.sleep(0.05)

    yield start
    for process in started:
        process.kill()
        process.wait()


@pytest.fixture
def tool_messages() -> Turn:
    """``await tool_messages(host, *script)``: one turn of a new agent on the scripted model's
    ``script``; the agent and the tool messages of its session, in order."""

    async def run(host: Any, *script: Any) -> tuple[Any, list[Any]]:
        model = host.services.models.resolve("scripted")
        model.script("user", *script)
        agent = await host.services.agents.create(label="user")
        agent.followup("go")
        await agent.wait_idle()
        tool = [e.body for e in agent.session.events if getattr(e.body, "role", "") == "tool"]
        return agent, tool

    return run
