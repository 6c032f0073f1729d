"""How long another host waits to take a killed holder's session over."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import psycopg
from agent_host_postgres.persistence import PostgresPersistence

from host.sessions.model import SessionHeader
from host.sessions.persistence import PersistenceError

from .support import ROOT

HOLDER = """
import sys, time
from agent_host_postgres.persistence import PostgresPersistence
from host.sessions.model import SessionHeader
dsn, schema, sid, ttl = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
persistence = PostgresPersistence(dsn, schema=schema, lease_ttl=ttl, pool_size=2)
writer = persistence.open_writer(SessionHeader(id=sid, created_at=1), create=True)
print("ready", flush=True)
time.sleep(3600)
"""


def lease_remaining(dsn: str, schema: str, sid: str) -> float:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            f"SELECT extract(epoch FROM expires_at - now()) FROM {schema}.leases"
            " WHERE session_id = %s",
            (sid,),
        ).fetchone()
    assert row is not None
    return float(row[0])


def one_takeover(dsn: str, schema: str, ttl: float, trial: int, poll: float) -> tuple[float, float]:
    """(kill → successful open_writer elsewhere, lease remaining at the kill) in seconds."""
    sid = f"victim-{str(ttl).replace('.', '_')}-{trial}"
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, dsn, schema, sid, str(ttl)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert child.stdout is not None
        if child.stdout.readline().strip() != "ready":
            raise RuntimeError("the lease holder did not start")
        time.sleep(ttl * (0.3 + 0.4 * (trial % 2)))  # let the heartbeat run for a while
        other = PostgresPersistence(dsn, schema=schema, lease_ttl=ttl, pool_size=2)
        header = SessionHeader(id=sid, created_at=1)
        try:
            other.open_writer(header, create=False).close()
            raise RuntimeError("the lease was not held")
        except PersistenceError as exc:
            assert exc.code == PersistenceError.LOCKED, exc
        remaining = lease_remaining(dsn, schema, sid)
        killed = time.perf_counter()
        child.send_signal(signal.SIGKILL)
        while True:
            try:
                writer = other.open_writer(header, create=False)
            except PersistenceError as exc:
                if exc.code != PersistenceError.LOCKED:
                    raise
                time.sleep(poll)
                continue
            took = time.perf_counter() - killed
            writer.close()
            break
        other.close()
        return took, remaining
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()


def bench_takeover(dsn: str, schema: str, ttls: list[float], trials: int, poll: float) -> None:
    print(f"takeover after SIGKILL of the lease holder (poll every {poll * 1e3:.0f} ms)")
    print(
        f"  {'lease_ttl s':>11} {'trial':>5} {'remaining at kill s':>19} {'takeover s':>10}"
        f" {'takeover - remaining ms':>23}"
    )
    for ttl in ttls:
        for trial in range(trials):
            took, remaining = one_takeover(dsn, schema, ttl, trial, poll)
            print(
                f"  {ttl:>11.1f} {trial:>5} {remaining:>19.3f} {took:>10.3f}"
                f" {(took - remaining) * 1e3:>23.1f}"
            )
