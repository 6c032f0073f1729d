"""Fixtures the MCP tests share: a free port, server processes awaited until they listen (and
killed at the end), a scripted turn's tool messages, and ``serve``, the SDK's own client against
a real ``agent-host mcp serve`` subprocess (stdio or streamable HTTP) in a project directory with
a script for the scripted model, an approval policy and a home of its own."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from agent_host_openai.testing import ENV_VARS
from mcp.client.session import ClientSession, ElicitationFnT, MessageHandlerFnT
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.cli.support import AGENT_HOST
from tests.support import free_port

Listening = Callable[..., subprocess.Popen[bytes]]
Turn = Callable[..., Awaitable[tuple[Any, list[Any]]]]


class McpServe:
    """``agent-host mcp serve`` in the directory ``path`` (``project`` writes its files)."""

    WAIT = 30
    """``wait_seconds`` of the reads that wait for a subagent (generous: the machine is
    shared)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.started: list[subprocess.Popen[bytes]] = []

    def project(self, script: dict[str, Any], policy: str = "") -> McpServe:
        """Write ``script.json``, an ``agent-host.toml`` holding ``policy``, and a home."""
        (self.path / "script.json").write_text(json.dumps(script))
        (self.path / "agent-host.toml").write_text(policy)
        (self.path / "home").mkdir(exist_ok=True)
        return self

    def environment(self) -> dict[str, str]:
        """The caller's environment without model settings, the home in ``path``."""
        environ = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("AGENT_HOST_") and k not in ENV_VARS
        }
        environ["AGENT_HOST_HOME"] = str(self.path / "home")
        return environ

    def command(self, *args: str) -> list[str]:
        """``agent-host --data-dir PATH/data mcp serve --script PATH/script.json ARGS``."""
        data, script = str(self.path / "data"), str(self.path / "script.json")
        return [AGENT_HOST, "--data-dir", data, "mcp", "serve", "--script", script, *args]

    @asynccontextmanager
    async def stdio(
        self,
        *args: str,
        elicit: ElicitationFnT | None = None,
        heard: MessageHandlerFnT | None = None,
    ) -> AsyncIterator[ClientSession]:
        """An initialized client over stdio (``elicit``: its elicitation handler; None
        declares no elicitation; ``heard``: its handler of notifications)."""
        program, *rest = self.command(*args)
        params = StdioServerParameters(
            command=program, args=rest, env=self.environment(), cwd=self.path
        )
        with (self.path / "stderr.txt").open("a") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(
                    read, write, elicitation_callback=elicit, message_handler=heard
                ) as session,
            ):
                await session.initialize()
                yield session

    @asynccontextmanager
    async def http_client(
        self, port: int, token: str, elicit: ElicitationFnT | None = None
    ) -> AsyncIterator[ClientSession]:
        """An initialized client over streamable HTTP of the server ``http`` started."""
        url = f"http://127.0.0.1:{port}/mcp"
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as client,
            streamable_http_client(url, http_client=client) as (read, write),
            ClientSession(read, write, elicitation_callback=elicit) as session,
        ):
            await session.initialize()
            yield session

    def token_file(self, port: int) -> Path:
        """Where the server on ``port`` writes its bearer token."""
        return self.path / "home" / f"mcp-serve-{port}.token"

    def http(self, port: int, *args: str) -> str:
        """Start ``--transport http --port PORT ARGS``; its bearer token once it listens."""
        errors = self.path / "stderr.txt"
        process = subprocess.Popen(
            self.command("--transport", "http", "--port", str(port), *args),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors.open("ab"),
            env=self.environment(), cwd=self.path,
        )
        self.started.append(process)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    return self.token_file(port).read_text().strip()
            except OSError:
                if process.poll() is not None:
                    raise AssertionError(errors.read_text()) from None
                time.sleep(0.1)
        raise AssertionError("mcp serve did not listen in time")


async def read_until_settled(
    session: ClientSession, after: str | None = None
) -> tuple[list[dict[str, Any]], str]:
    """Every message ``read_agent_messages`` returns, following its cursor, until a
    settlement notice; and the last cursor."""
    messages: list[dict[str, Any]] = []
    while not any(m["kind"] == "settled" for m in messages):
        arguments: dict[str, Any] = {"wait_seconds": McpServe.WAIT}
        if after is not None:
            arguments["after"] = after
        result = await session.call_tool("read_agent_messages", arguments)
        assert not result.is_error, result.content
        assert result.structured_content["messages"], "nothing arrived in time"
        messages += result.structured_content["messages"]
        after = result.structured_content["next"]
    assert after is not None
    return messages, after


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[McpServe]:
    """``mcp serve`` in ``tmp_path``; HTTP servers it started are stopped after the test."""
    served = McpServe(tmp_path)
    yield served
    for process in served.started:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def settle() -> Any:
    """``read_until_settled``, for the tests."""
    return read_until_settled


@pytest.fixture
def port() -> int:
    """A TCP port on loopback that nothing listens on now."""
    return free_port()


@pytest.fixture
def another_port() -> int:
    """A second such port."""
    return free_port()


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
    """``await tool_messages(host, *script, stream=None)``: one turn of a new agent on the
    scripted model's ``script`` (``stream``: a listener of its stream events); the agent and the
    tool messages of its session, in order."""

    async def run(
        host: Any, *script: Any, stream: Callable[[Any], object] | None = None
    ) -> tuple[Any, list[Any]]:
        model = host.services.models.resolve("scripted")
        model.script("user", *script)
        agent = await host.services.agents.create(label="user")
        if stream is not None:
            agent.on_stream(stream)
        agent.followup("go")
        await agent.wait_idle()
        tool = [e.body for e in agent.session.events if getattr(e.body, "role", "") == "tool"]
        return agent, tool

    return run
