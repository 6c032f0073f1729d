"""How a host talks to the database: its connection pool, and errors and logs on one line.

* **Pool**: ``open_pool`` opens up to ``size`` autocommit connections, each set to the schema
  and warmed (``WARM_UP``) on the pool's thread before anyone uses it; each carries the host
  id as ``fallback_application_name`` (``pg_stat_activity`` shows which host holds what).
* **Checkout check**: ``check_connection`` costs no round trip for a healthy idle connection;
  a broken one is replaced, so the store recovers by itself when the server returns.
* **Errors**: ``connection`` turns every database error into one ``PERSISTENCE_FAILED`` line.
* **Logs**: libpq messages span lines (``connection refused`` and a hint on the next line);
  ``ONE_LINE`` folds each record of ``psycopg.pool`` to one line, so an outage is one line
  per reconnection attempt, and the plugin's own warnings use ``one_line``.
"""

from __future__ import annotations

import logging
import select
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import sql
from psycopg_pool import ConnectionPool, PoolTimeout

from host.api import PersistenceError

__all__ = ["ONE_LINE", "WARM_UP", "check_connection", "connection", "one_line", "open_pool"]

WARM_UP = """
SELECT (SELECT count(*) FROM sessions WHERE id = ''),
       (SELECT count(*) FROM events WHERE session_id = ''),
       (SELECT count(*) FROM leases WHERE session_id = ''),
       (SELECT count(*) FROM remote_inbox WHERE session_id = '')
"""
"""Touches every table and its key index once: a new server backend loads their catalog
entries (several milliseconds) here, when the pool opens the connection, not in the first
request that uses it."""


def one_line(text: object) -> str:
    """``text`` with every run of whitespace, line breaks included, as one space."""
    return " ".join(str(text).split())


class _OneLine(logging.Filter):
    """Folds a record's message to one line (and drops its traceback unless DEBUG is on)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = one_line(record.getMessage()), None
        if record.exc_info and not logging.getLogger(record.name).isEnabledFor(logging.DEBUG):
            record.exc_info = None
        return True


ONE_LINE = _OneLine()
logging.getLogger("psycopg.pool").addFilter(ONE_LINE)


def check_connection(conn: psycopg.Connection[Any]) -> None:
    """The pool's check at every checkout, with no round trip for a healthy idle connection.

    A server that shuts down or terminates the backend sends an error and closes the socket,
    so an idle connection with nothing to read is healthy as far as a query could tell; one
    with something to read is checked with psycopg_pool's empty query (which raises if it is
    broken, and the pool replaces it). A silently severed link is found by the next query.
    """
    if conn.closed:
        raise psycopg.OperationalError("the connection is closed")
    readable, _, _ = select.select([conn.pgconn.socket], [], [], 0)
    if readable:
        ConnectionPool.check_connection(conn)


def open_pool(
    dsn: str, *, schema: str, host_id: str, size: int, connect_timeout: int
) -> ConnectionPool[psycopg.Connection[Any]]:
    """The host's pool (module docstring); a checkout waits at most ``connect_timeout``."""

    def configure(conn: psycopg.Connection[Any]) -> None:
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
        conn.execute(WARM_UP)

    return ConnectionPool(
        dsn,
        min_size=1,
        max_size=max(1, size),
        kwargs={
            "autocommit": True,
            "connect_timeout": connect_timeout,
            "fallback_application_name": f"agent-host {host_id}",
        },
        configure=configure,
        check=check_connection,
        timeout=float(connect_timeout),
        name=f"agent-host-{schema}",
        open=True,
    )


@contextmanager
def connection(
    pool: ConnectionPool[psycopg.Connection[Any]], action: str
) -> Iterator[psycopg.Connection[Any]]:
    """A pooled connection; database errors become ``PERSISTENCE_FAILED: <action>: …``."""
    try:
        with pool.connection() as conn:
            yield conn
    except (PoolTimeout, psycopg.Error) as exc:
        raise PersistenceError.failed(action, exc) from exc
