"""One configured MCP server as a plugin of its own (``mcp.<name>``).

Made by the ``mcp`` plugin's ``register_plugins``: building the object starts the server (so
every server starts at once, concurrently); ``register_tools`` waits for it to be ready within
its ``startup_timeout`` and registers its tools; ``activate`` arranges the close and watches the
server. A server that dies turns this plugin ``failed`` with its one-line exit; a changed tool
list replaces the tools live. Reloading the plugin starts the server afresh.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from agent_host_mcp import open_connections
from agent_host_mcp.config import ServerSpec
from agent_host_mcp.connection import CallOutcome, McpError, ServerConnection, ToolInfo
from agent_host_mcp.loop import McpLoop
from agent_host_mcp.tools import adapt
from host import hookimpl
from host.errors import HostError
from host.tools import Tool, ToolExec

log = logging.getLogger("agent_host_mcp")


class ServerPlugin:
    """The plugin object of one server; ``connection`` is its live connection."""

    def __init__(self, spec: ServerSpec, loop: McpLoop) -> None:
        self.spec = spec
        self.connection = ServerConnection(spec, loop)
        self.connection.start()
        open_connections.add(self.connection)
        self._loop = loop
        self._register: Callable[[Tool], Callable[[], None]] | None = None
        self._registered: list[Callable[[], None]] = []
        self._host_loop: asyncio.AbstractEventLoop | None = None
        self._handle: Any = None

    def __repr__(self) -> str:
        return f"ServerPlugin({self.spec.name!r})"

    @hookimpl
    def register_tools(self, register: Callable[[Tool], Callable[[], None]]) -> None:
        """Wait for the server (raising its one-line failure) and offer its tools."""
        try:
            infos = self.connection.wait_ready(self.spec.startup_timeout + 5.0)
        except McpError as error:
            self._close()
            raise HostError("MCP_SERVER_FAILED", str(error)) from None
        self._register = register
        self._replace_tools(infos)

    @hookimpl
    def activate(self, scope: Any, plugin: Any) -> None:
        """Close the server with the plugin; fail the plugin when the server dies."""
        scope.add(self._close)
        self._handle = plugin
        try:
            self._host_loop = asyncio.get_running_loop()
        except RuntimeError:
            self._host_loop = None  # learnt at the first call instead

        def exited(error: str) -> None:  # on the MCP loop thread
            host_loop = self._host_loop
            if host_loop is not None and not host_loop.is_closed():
                host_loop.call_soon_threadsafe(plugin.fail, error)

        def changed(infos: list[ToolInfo]) -> None:  # on the MCP loop thread
            host_loop = self._host_loop
            if host_loop is not None and not host_loop.is_closed():
                host_loop.call_soon_threadsafe(self._replace_tools, infos)

        self.connection.on_exit(exited)
        self.connection.on_tools_changed(changed)

    def _close(self) -> None:
        self.connection.close()
        open_connections.discard(self.connection)

    def _replace_tools(self, infos: list[ToolInfo]) -> None:
        """Offer exactly the tools in ``infos`` (those offered before are taken back)."""
        assert self._register is not None
        for dispose in self._registered:
            dispose()
        adapted = adapt(self.spec.name, infos, self._call, self.spec.allows)
        self._registered = [self._register(made) for made in adapted.tools]

    async def _call(self, name: str, arguments: dict[str, Any], exec: ToolExec) -> CallOutcome:
        if self._host_loop is None:  # a host opened outside any loop (the CLI) learns it here
            self._host_loop = asyncio.get_running_loop()
        # an interrupt cancels this task (the driver does both): no waiter on the signal needed
        outcome = await self.connection.call_tool(name, arguments)
        error = self.connection.error
        if error is not None and self._handle is not None:  # died before the loop was known
            self._host_loop.call_soon(self._handle.fail, error)
        return outcome
