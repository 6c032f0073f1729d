"""The schema and its versioned migrations, applied when the persistence starts.

``schema_version`` holds one row per applied migration. Migrations run in one transaction
under a transaction-level advisory lock, so hosts starting together apply each exactly once.
A database whose version is newer than this code knows is refused (never downgraded).

Tables (in the configured PostgreSQL schema, ``agent_host`` by default):

* ``sessions``: ``id`` primary key, the header columns, ``created_at`` (ns, bigint) and the
  header's exact codec line ``header`` (text; what ``inspect`` decodes).
* ``events``: ``(session_id, seq)`` primary key, ``body`` the event's flat JSON exactly as
  ``host.sessions.codec`` encodes it, stored as ``text``: ``jsonb`` would reject the escape
  ``\\u0000`` that message content may legitimately contain, and text keeps the bytes
  identical to a JSONL line.
* ``leases`` (version 2): who owns each session, under which epoch, until when; see
  ``agent_host_postgres.leases``.
* ``remote_inbox`` (version 3): messages sent to a session another host holds, waiting for
  that host to accept them; see ``agent_host_postgres.inbox``.
"""

from __future__ import annotations

import re
from typing import Any

from psycopg import sql

SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")

MIGRATIONS: tuple[tuple[int, str], ...] = (
    (
        1,
        """
        CREATE TABLE sessions (
            id text PRIMARY KEY,
            parent_session text,
            created_at bigint NOT NULL,
            origin text,
            delegation_depth integer NOT NULL,
            seed_length integer NOT NULL,
            header text NOT NULL
        );
        CREATE INDEX sessions_created_at_id ON sessions (created_at, id);
        CREATE TABLE events (
            session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            seq bigint NOT NULL,
            body text NOT NULL,
            PRIMARY KEY (session_id, seq)
        );
        """,
    ),
    (
        2,
        """
        CREATE TABLE leases (
            session_id text PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
            owner text,
            epoch bigint NOT NULL,
            status text NOT NULL CHECK (status IN ('running', 'idle')),
            expires_at timestamptz NOT NULL
        );
        CREATE INDEX leases_owner ON leases (owner) WHERE owner IS NOT NULL;
        """,
    ),
    (
        3,
        """
        CREATE TABLE remote_inbox (
            seq bigserial PRIMARY KEY,
            message_id text NOT NULL UNIQUE,
            session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            delivery text NOT NULL CHECK (delivery IN ('followup', 'steer', 'inject')),
            content text NOT NULL,
            source text,
            sender_host text NOT NULL,
            sender_session text,
            created_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX remote_inbox_session ON remote_inbox (session_id, seq);
        """,
    ),
)
LATEST = MIGRATIONS[-1][0]
_MIGRATION_LOCK = 0x61676E74_6D696772  # "agntmigr": serializes migrations across hosts


def check_schema_name(name: str) -> str:
    """``name`` if it is a plain lower-case identifier, else ``ValueError``."""
    if not isinstance(name, str) or SCHEMA_NAME.fullmatch(name) is None:
        raise ValueError(f"plugins.postgres.schema must match {SCHEMA_NAME.pattern}, not {name!r}")
    return name


def migrate(conn: Any, schema: str) -> int:
    """Create ``schema`` if needed and apply the missing migrations; return the version."""
    ident = sql.Identifier(check_schema_name(schema))
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(ident))
        conn.execute(sql.SQL("SET LOCAL search_path TO {}").format(ident))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_version ("
            " version integer PRIMARY KEY,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        row = conn.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()
        current = int(row[0])
        if current > LATEST:
            raise RuntimeError(
                f"database schema {schema!r} is at version {current}, newer than this "
                f"plugin supports ({LATEST}); upgrade agent-host-postgres"
            )
        for version, statements in MIGRATIONS:
            if version > current:
                conn.execute(statements)
                conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (version,))
                current = version
    return current
