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

log = logging.getLogger(__name__)

MCP_JSON = ".mcp.json"


@attrs.frozen
class Config:
    """``[plugins.mcp]``: ``servers`` maps a server name to its definition (docs/mcp.md)."""

    servers: dict[str, dict[str, Any]] = attrs.field(
        factory=dict,
        metadata={"description": "MCP servers by name: command/args/env/cwd or url/headers."},
    )


def configured_servers(config: Config | None, settings: Any, environ: Any) -> Servers:
    """The servers of agent-host.toml and the project's .mcp.json (see ``load_servers``)."""
    from agent_host_mcp.config import load_servers

    project = getattr(settings, "project_dir", None)
    return load_servers(
        (config or Config()).servers,
        Path(project) / MCP_JSON if project is not None else None,
        environ,
        toml_project=not getattr(settings, "config_trusted", True),
        mcp_json_project=True,
    )


class _Servers:
    """What the ``mcp`` plugin keeps while active: the MCP loop its servers share."""

    loop: McpLoop | None = None


open_connections: set[Any] = set()
"""Every server connection a ``ServerPlugin`` opened and has not closed yet."""


def _close_all(connections: list[Any]) -> None:
    for connection in connections:
        connection.close()


class Shutdown:
    """The ``mcp_shutdown`` service: the host awaits its ``aclose`` before it disposes plugins,
    so every server is asked to stop at once instead of one after another."""

    async def aclose(self) -> None:
        """Ask every live server to stop, then wait for them all (off the event loop)."""
        live = list(open_connections)
        for connection in live:
            connection.request_close()
        if live:
            await asyncio.to_thread(_close_all, live)


_state = _Servers()


def _shared_loop() -> McpLoop:
    from agent_host_mcp.loop import McpLoop

    if _state.loop is None:
        _state.loop = McpLoop()
    return _state.loop


@hookimpl
def register_plugins(register: Callable[..., None], ctx: Any, config: Config | None) -> None:
    """One sub-plugin per configured server; nothing (and no SDK) when there are none."""
    import os

    settings = ctx.find("settings") if ctx is not None else None
    project = getattr(settings, "project_dir", None)
    if not (config and config.servers) and not (project and (Path(project) / MCP_JSON).exists()):
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
        register(spec.name, _starter(spec), blocked=blocked)


def _starter(spec: ServerSpec) -> Callable[[], Any]:
    def load() -> Any:
        from agent_host_mcp.server import ServerPlugin

        return ServerPlugin(spec, _shared_loop())

    return load


def _failing(message: str) -> Callable[[], Any]:
    def load() -> Any:
        from host.errors import ConfigError

        raise ConfigError(message)

    return load


@hookimpl
def register_services(register: Callable[[str, Any], None]) -> None:
    """Provide ``mcp_shutdown`` (see ``Shutdown``)."""
    register("mcp_shutdown", Shutdown())


@hookimpl
def activate(scope: Any) -> None:
    """Stop the MCP loop (after every server closed) when the plugin deactivates."""

    def stop() -> None:
        loop, _state.loop = _state.loop, None
        if loop is not None:
            loop.close()

    scope.add(stop)
