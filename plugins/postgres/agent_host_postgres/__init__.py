"""The ``postgres`` plugin: session persistence on PostgreSQL instead of JSONL files.

Configuration: ``[plugins.postgres] dsn = "postgresql://…"`` (and optionally ``schema``,
``lease_ttl``, ``pool_size``, ``connect_timeout``, ``host_name``), overlaid by the environment
variable ``AGENT_HOST_POSTGRES_DSN`` (a set, non-empty value wins over the file). Without a DSN
the plugin stays active and provides nothing, so the built-in JSONL store keeps serving. The
DSN is first used, and so first found wrong or unreachable, when the store is built: at the
first command that needs sessions, not when the host opens.

With a DSN it provides the ``session_persistence`` service. The built-in JSONL provider is a
default: it steps aside (the plugins that use the service restart on PostgreSQL) and comes back
when this plugin is blocked or deactivates. See README.md, "Running several hosts".
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any

import attrs

from host import hookimpl, lazy_attributes
from host.api import ConfigError, Lazy

if TYPE_CHECKING:
    from agent_host_postgres.persistence import PostgresPersistence
    from host.api import RegisterService, Scope, ServiceContext

__all__ = [
    "DSN_ENV",
    "Config",
    "PostgresPersistence",
    "activate",
    "register_services",
    "resolve_dsn",
]

requires: tuple[str, ...] = ()

DSN_ENV = "AGENT_HOST_POSTGRES_DSN"
HOST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")


__getattr__ = lazy_attributes(
    __name__, {"PostgresPersistence": "agent_host_postgres.persistence"}
)
"""psycopg loads on first use, not at plugin load."""


@attrs.frozen
class Config:
    """``[plugins.postgres]`` in agent-host.toml."""

    dsn: str | None = attrs.field(
        default=None,
        metadata={"description": "libpq connection string or URI; AGENT_HOST_POSTGRES_DSN wins."},
    )
    schema: str = attrs.field(
        default="agent_host",
        metadata={"description": "The PostgreSQL schema holding the tables (created if absent)."},
    )
    lease_ttl: float = attrs.field(
        default=15.0,
        metadata={
            "description": "Seconds a session lease outlives its owner's last heartbeat "
            "(heartbeats come every third of it); another host may take over after that."
        },
    )
    pool_size: int = attrs.field(
        default=8,
        metadata={"description": "Most connections this host opens to the database."},
    )
    connect_timeout: int = attrs.field(
        default=10,
        metadata={
            "description": "Seconds one connection attempt, or one wait for a pooled "
            "connection, may take before the call fails with PERSISTENCE_FAILED."
        },
    )
    host_name: str | None = attrs.field(
        default=None,
        metadata={
            "description": "Starts this host's id, <host_name>:<pid>:<random>, as seen in "
            "the leases table and pg_stat_activity; default: the machine's host name."
        },
    )


def resolve_dsn(config: Config | None, environ: Any = None) -> str | None:
    """The DSN in effect: the environment variable when set and non-empty, else the config."""
    env = os.environ if environ is None else environ
    value = env.get(DSN_ENV, "").strip()
    if value:
        return str(value)
    if config is not None and config.dsn:
        return config.dsn
    return None


@hookimpl
def register_services(register: RegisterService, ctx: ServiceContext, config: Config) -> None:
    """Provide ``session_persistence`` over PostgreSQL when a DSN is configured."""
    config = config if config is not None else Config()
    dsn = resolve_dsn(config)
    if dsn is None:
        return
    from agent_host_postgres.schema import check_schema_name

    check_schema_name(config.schema)
    if not config.lease_ttl > 0:
        raise ConfigError(f"plugins.postgres.lease_ttl must be > 0, not {config.lease_ttl!r}")
    if config.pool_size < 1:
        raise ConfigError(f"plugins.postgres.pool_size must be >= 1, not {config.pool_size!r}")
    if config.connect_timeout < 1:
        raise ConfigError(
            f"plugins.postgres.connect_timeout must be >= 1, not {config.connect_timeout!r}"
        )
    if config.host_name is not None and not HOST_NAME.fullmatch(config.host_name):
        raise ConfigError(
            f"plugins.postgres.host_name must match {HOST_NAME.pattern}, not {config.host_name!r}"
        )

    def build() -> Any:
        from agent_host_postgres.persistence import PostgresPersistence

        return PostgresPersistence(
            dsn,
            schema=config.schema,
            lease_ttl=config.lease_ttl,
            pool_size=config.pool_size,
            connect_timeout=config.connect_timeout,
            host_name=config.host_name,
        )

    register("session_persistence", Lazy(build))


@hookimpl
def activate(ctx: ServiceContext, scope: Scope) -> None:
    """On deactivation, close the store this plugin built (its pool and lease heartbeat)."""

    def close() -> None:  # runs before the service is withdrawn (scopes dispose in reverse)
        persistence = ctx.built("session_persistence")
        if persistence is not None and ctx.provider("session_persistence") == "postgres":
            persistence.close()

    scope.add(close)
