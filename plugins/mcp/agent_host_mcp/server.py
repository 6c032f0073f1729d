"""One configured MCP server as a plugin of its own (``mcp.<name>``).

Made by the ``mcp`` plugin's ``register_plugins``: building the object starts the server (so
every server starts at once, concurrently); ``register_tools`` waits for it to be ready within
its ``startup_timeout`` and registers its tools; ``activate`` arranges the close and watches the
server. A server that dies turns this plugin ``failed`` with its one-line exit (calls of its
tools answer that line); a changed tool list replaces the tools live. A streamable-HTTP server
that became unreachable fails the plugin the same way while its connection reconnects in the
background; once it is back the plugin activates again with its tools listed afresh.
Reloading the plugin starts the server afresh.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agent_host_mcp import McpHost
from agent_host_mcp.config import ServerSpec
from agent_host_mcp.connection import CallOutcome, McpError, ServerConnection, ToolInfo
from agent_host_mcp.progress import ProgressRelay
from agent_host_mcp.tools import adapt
from host import hookimpl
from host.api import HostError
from host.tools import ToolExec

if TYPE_CHECKING:
    from host.api import Disposer, PluginHandle, RegisterTool, Scope

log = logging.getLogger("agent_host_mcp")


class ServerPlugin:
    """The plugin object of one server; ``connection`` is its live connection."""

    def __init__(self, spec: ServerSpec, mcp: McpHost) -> None:
        self.spec = spec
        self._mcp = mcp
        self._register: RegisterTool | None = None
        self._registered: list[Disposer] = []
        self._host_loop: asyncio.AbstractEventLoop | None = None
        self._handle: Any = None
        self._closed = False
        self._dormant = False  # failed, its connection reconnecting in the background
        self.connection = self._connect()

    def _connect(self) -> ServerConnection:
        """Start the server (returns at once; ``register_tools`` waits for it)."""
        connection = ServerConnection(self.spec, self._mcp.loop())
        connection.on_exit(lambda error: self._on_host_loop(self._fail, error))
        connection.on_tools_changed(lambda infos: self._on_host_loop(self._replace_tools, infos))
        connection.on_back(lambda _infos: self._on_host_loop(self._recover))
        connection.start()
        self._mcp.connections.add(connection)
        return connection

    def __repr__(self) -> str:
        return f"ServerPlugin({self.spec.name!r})"

    @hookimpl
    def register_tools(self, register: RegisterTool) -> None:
        """Wait for the server (raising its one-line failure) and offer its tools."""
        if self._closed:  # activated again after a close (a reload put this object back)
            self._closed = False
            self.connection = self._connect()
        self._dormant = False
        try:
            self.connection.wait_ready(self.spec.startup_timeout + 5.0)
        except McpError as error:
            self._close()
            raise HostError("MCP_SERVER_FAILED", str(error)) from None
        self._register = register
        self._replace_tools(self.connection.tools)
        down = self.connection.error
        if down is not None:  # down again since it came back: failed once active, as before
            self._on_host_loop(self._fail, down)

    @hookimpl
    def activate(self, scope: Scope, plugin: PluginHandle) -> None:
        """Close the server with the plugin; fail the plugin when the server dies."""
        scope.add(self._close)
        self._handle = plugin
        try:
            self._host_loop = asyncio.get_running_loop()
        except RuntimeError:
            self._host_loop = None  # learnt at the first call instead

    def _on_host_loop(self, callback: Callable[..., object], *args: Any) -> None:
        """Run ``callback(*args)`` on the host's loop, if one is known and still open."""
        host_loop = self._host_loop
        if host_loop is not None:
            with contextlib.suppress(RuntimeError):  # it closed meanwhile: nobody to tell
                host_loop.call_soon_threadsafe(callback, *args)

    def _fail(self, error: str) -> None:
        """The server died or became unreachable: the plugin fails with ``error``; an HTTP
        server's connection stays, reconnecting (``_recover`` when it is back)."""
        if self._handle is None or self._closed or self._dormant:
            return
        self._dormant = self.connection.reconnects
        self._handle.fail(error)

    def _recover(self) -> None:
        """The HTTP server is back: activate the plugin again on the same connection; a
        connection nobody takes back (the plugin was reloaded or closed meanwhile) closes."""
        if not self._dormant:
            return
        if self._handle is not None:
            self._handle.recover()
        if self._dormant:
            self._dormant = False
            self._close()

    def _close(self) -> None:
        self._registered = []  # the plugin's scope takes its registrations back
        if self._dormant:  # taken down by its failure: the connection reconnects
            return
        self._closed = True
        self.connection.close()
        self._mcp.connections.discard(self.connection)

    def _replace_tools(self, infos: list[ToolInfo]) -> None:
        """Offer exactly the tools in ``infos`` (those offered before are taken back); nothing
        once the plugin closed (a late list change)."""
        if self._closed or self._dormant or self._register is None:
            return
        for dispose in self._registered:
            dispose()
        self._registered = []
        adapted = adapt(self.spec.name, infos, self._call, self.spec.allows)
        for made in adapted.tools:
            self._registered.append(self._register(made))

    async def _call(self, name: str, arguments: dict[str, Any], exec: ToolExec) -> CallOutcome:
        self._host_loop = asyncio.get_running_loop()  # the loop agents run on now
        # an interrupt cancels this task (the driver does both): no waiter on the signal needed
        relay = ProgressRelay(self._host_loop, exec)
        try:
            outcome = await self.connection.call_tool(name, arguments, relay)
        finally:
            relay.end()
        error = self.connection.error
        if error is not None:
            self._host_loop.call_soon(self._fail, error)  # died before it was noticed
        return outcome
