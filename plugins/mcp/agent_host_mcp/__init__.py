"""The ``mcp`` plugin: tools from MCP servers, every configured server a plugin of its own.

Servers come from ``[plugins.mcp.servers.<name>]`` in agent-host.toml and from the project's
``.mcp.json`` (Claude Code's format); agent-host.toml wins a name clash, with a warning. Each
becomes the sub-plugin ``mcp.<name>``: its row, selection (``--no-plugin mcp.<name>``), failure
and reload are its own. A server the project defines (its agent-host.toml or ``.mcp.json``)
is ``blocked`` until the user trusts it (``agent-host mcp trust <name>``).

The SDK is imported only when at least one server is configured: without servers this module
costs the host nothing but itself.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from host import hookimpl

if TYPE_CHECKING:
    from agent_host_mcp.config import Servers, ServerSpec
    from agent_host_mcp.loop import McpLoop
    from host.api import HostSettings, RegisterPlugin, RegisterService, Scope, ServiceContext

log = logging.getLogger(__name__)

MCP_JSON = ".mcp.json"


@attrs.frozen
class Config:
    """``[plugins.mcp]``: ``servers`` maps a server name to its definition (docs/mcp.md)."""

    servers: dict[str, dict[str, Any]] = attrs.field(
        factory=dict,
        metadata={"description": "MCP servers by name: command/args/env/cwd or url/headers."},
    )


def configured_servers(config: Config | None, settings: HostSettings, environ: Any) -> Servers:
    """The servers of agent-host.toml and the project's .mcp.json (see ``load_servers``)."""
    from agent_host_mcp.config import load_servers

    project = settings.project_dir
    return load_servers(
        (config or Config()).servers,
        project / MCP_JSON if project is not None else None,
        environ,
        toml_project=not settings.config_trusted,
        mcp_json_project=True,
    )


class McpHost:
    """The ``mcp`` service: what one host's ``mcp`` plugin keeps while active — the MCP loop
    its servers share and their open connections. Its ``aclose``, awaited by the host before
    plugins are disposed, ends the agents' turns first (a call in flight ends as interrupted,
    not as "closed"), then asks every server to stop at once and waits for them all."""

    def __init__(self, ctx: ServiceContext | None) -> None:
        self._ctx = ctx
        self._loop: McpLoop | None = None
        self.connections: set[Any] = set()

    def loop(self) -> McpLoop:
        """The loop the servers of this host share (started on first use)."""
        from agent_host_mcp.loop import McpLoop

        if self._loop is None:
            self._loop = McpLoop()
        return self._loop

    async def aclose(self) -> None:
        """End the agents' turns, then stop every server together (off the event loop)."""
        agents = self._ctx.find("agents") if self._ctx is not None else None
        live = list(self.connections)
        if live and agents is not None:
            await agents.dispose_all()
        for connection in live:
            connection.request_close()
        if live:
            await asyncio.to_thread(_close_all, live)

    def stop(self) -> None:
        """Stop the loop (every server of it closed first)."""
        loop, self._loop = self._loop, None
        if loop is not None:
            loop.close()


def _close_all(connections: list[Any]) -> None:
    for connection in connections:
        connection.close()


@hookimpl
def register_services(register: RegisterService, ctx: ServiceContext) -> None:
    """Provide ``mcp`` (see ``McpHost``)."""
    register("mcp", McpHost(ctx))


@hookimpl
def activate(scope: Scope, ctx: ServiceContext) -> None:
    """Stop this host's MCP loop (after every server closed) when the plugin deactivates."""
    scope.add(ctx.get("mcp").stop)


@hookimpl
def register_plugins(
    register: RegisterPlugin, ctx: ServiceContext, config: Config | None
) -> None:
    """One sub-plugin per configured server; nothing (and no SDK) when there are none or the
    command calls no tool (``HostSettings.tools_used``)."""
    import os

    settings = ctx.settings
    if not settings.tools_used:
        return  # a command that calls no tool: no server starts, the configuration unread
    project = settings.project_dir
    if not (config and config.servers) and not (project and (project / MCP_JSON).exists()):
        return  # the common case costs a stat, not the parsing module
    servers = configured_servers(config, settings, os.environ)
    for line in servers.warnings:
        log.warning("%s", line)
    for problem in servers.problems:
        if problem.name is None:
            log.warning("%s", problem.message)
        else:
            register(problem.name, _failing(problem.message))
    if not servers.specs:
        return
    from agent_host_mcp.trust import TrustStore, default_trust_path, untrusted_reason

    store = TrustStore(default_trust_path(os.environ))
    for spec in servers.specs:
        trusted = project is None or store.is_trusted(Path(project), spec)
        blocked = None if trusted else untrusted_reason(spec.name)
        register(spec.name, _starter(spec, ctx.get("mcp")), blocked=blocked)


def _starter(spec: ServerSpec, mcp: McpHost) -> Callable[[], Any]:
    def load() -> Any:
        from agent_host_mcp.server import ServerPlugin

        return ServerPlugin(spec, mcp)

    return load


def _failing(message: str) -> Callable[[], Any]:
    def load() -> Any:
        from host.api import ConfigError

        raise ConfigError(message)

    return load
