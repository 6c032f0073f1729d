"""PostgreSQL persistence benchmark: appends, listing, takeover and delivery, against JSONL.

Not a test (the measurements live in ``bench/pg/``, one module each). Run from the project root
with the project venv and a PostgreSQL server::

    (source .ci/postgres.sh && .venv/bin/python bench/postgres.py)
    .venv/bin/python bench/postgres.py --dsn postgresql://user@host/db [--big]

The DSN comes from ``--dsn`` or ``AGENT_HOST_TEST_POSTGRES_DSN``; everything PostgreSQL-side
lives in a fresh schema ``bench_<random>`` that is dropped at the end. JSONL data goes to a
temporary directory (``--dir`` to choose the disk). Measured in the same run:

* **Appends** (``SessionWriter.append``, synchronous: on PostgreSQL through the host's
  commit thread, waiting for each):
  ``--sessions`` sessions × ``--appends`` appends, of one event (``commit(durable=True)`` at
  every turn end, i.e. every 10 events) and of a 10-event turn batch (one commit per batch),
  the same pre-built events (``TurnStart``, ``MessageEvent``s, ``TurnEnd``) on PostgreSQL and
  on JSONL with ``fsync="never"`` and ``fsync="turn"``. Only the append/commit calls are
  timed (writers are opened and closed outside the clock), after one discarded warm-up
  round. Throughput is the best of ``--repeat`` interleaved rounds; per-append p50/p99 pool
  every round.
* **Append latency components** on PostgreSQL, interleaved: the codec encoding alone, an
  empty query (a bare round trip, which a pooled checkout no longer sends), ``SELECT 1`` and a
  plain one-row ``INSERT`` (round trip + commit, no lease) on a direct and on a pooled
  connection, the fenced statement (lease renewal + insert + epoch check) on a direct
  connection, and ``writer.append`` itself.
* **Concurrent appends** (``bench/pg/concurrency.py``): ``--sessions`` agents of one host,
  each a task awaiting ``--appends`` one-event appends (``Session.append_async``), against
  one agent doing the same, and against the same agents appending synchronously
  (``Session.append``: the loop waits for each append); with the longest event-loop stall
  meanwhile, on loopback and through a proxy process adding ``--delay-ms`` to every round
  trip (a database one network hop away).
* **Resume** of a 100-event session (``SessionStore.resume``) against an ``inspect`` of it,
  on PostgreSQL and JSONL: the first call in ``--resume-hosts`` fresh processes, and steady
  (``bench/pg/resume.py``, ``bench/resume.py``).
* **list_children** over ``--children`` continuable children (a descriptor then messages,
  ``--child-events`` events each) of one parent plus ``--unrelated`` other sessions, the same
  corpus written through each backend's ``open_writer``: ``list()`` alone, read-once
  (``list()`` + one ``inspect`` per child, 8 at a time: the cold floor), cold ``list_children``
  (a new, empty identity index each time), warm (index trusted) and warm through a fresh
  ``IdentityIndex`` object (as another process would). Medians of ``--cold-runs``/``--runs``.
  On PostgreSQL listing also runs one ``residency`` query for all children (timed alone too).
* **Takeover after a kill**: a child process opens a writer (takes the lease, heartbeat
  running) and is SIGKILLed; another ``PostgresPersistence`` polls ``open_writer`` every
  ``--poll`` seconds until it succeeds. Reported per ``--ttl``: the time from the kill to the
  successful open, and the lease's remaining life at the kill (read from the database just
  before it) — the takeover is that wait plus polling and acquisition.
* **Cross-host delivery** (NOTIFY path), at the ``RemoteInbox`` level: host B's
  ``send_remote`` to a session host A holds and ``watch``es, until A has appended the
  acceptance (``measure_delivery``); p50/p99 of ``--notifies`` messages, one in flight.
  Measured only when ``PostgresPersistence`` has the API, else "not measured"; the raw
  ``LISTEN``/``NOTIFY`` round trip between two connections is printed as its floor either way.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import psycopg  # noqa: E402

from bench.pg.appends import bench_appends, bench_components  # noqa: E402
from bench.pg.concurrency import bench_concurrency  # noqa: E402
from bench.pg.delivery import bench_delivery  # noqa: E402
from bench.pg.listing import bench_listing  # noqa: E402
from bench.pg.resume import bench_resume  # noqa: E402
from bench.pg.support import Backends, drop_schema  # noqa: E402
from bench.pg.takeover import bench_takeover  # noqa: E402
from host.sessions.codec import BACKEND  # noqa: E402

DSN_ENV = "AGENT_HOST_TEST_POSTGRES_DSN"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", default=os.environ.get(DSN_ENV), help=f"default: ${DSN_ENV}")
    parser.add_argument("--dir", type=Path, default=None, help="scratch directory for JSONL")
    parser.add_argument("--sessions", type=int, default=10, help="sessions per append round")
    parser.add_argument("--appends", type=int, default=300, help="appends per session")
    parser.add_argument("--repeat", type=int, default=3, help="append rounds per backend")
    parser.add_argument(
        "--delay-ms", type=float, default=1.0, help="added round trip for the concurrency run"
    )
    parser.add_argument("--components", type=int, default=1500, help="calls per component")
    parser.add_argument("--children", type=int, default=1000)
    parser.add_argument("--child-events", type=int, default=100, help="events per child log")
    parser.add_argument("--unrelated", type=int, default=1000, help="other stored sessions")
    parser.add_argument("--runs", type=int, default=5, help="repeats of each warm measurement")
    parser.add_argument("--cold-runs", type=int, default=3, help="repeats of read-once and cold")
    parser.add_argument("--ttl", type=float, nargs="+", default=[1.0, 3.0], help="lease ttls")
    parser.add_argument("--trials", type=int, default=2, help="takeovers per ttl")
    parser.add_argument("--poll", type=float, default=0.02, help="takeover poll interval (s)")
    parser.add_argument("--notifies", type=int, default=500)
    parser.add_argument("--resume-hosts", type=int, default=15, help="fresh hosts per resume")
    parser.add_argument(
        "--big",
        action="store_true",
        help="larger run (minutes): 30 x 1000 appends, 1,000-event children, 10,000 others",
    )
    parser.add_argument(
        "--only",
        choices=("appends", "concurrency", "resume", "listing", "takeover", "delivery"),
        nargs="+",
        default=None,
    )
    args = parser.parse_args()
    if not args.dsn:
        sys.exit(f"postgres.py: no DSN (--dsn or ${DSN_ENV}; see .ci/postgres.sh)")
    if args.big:
        args.sessions, args.appends, args.repeat = 30, 1000, 3
        args.child_events, args.unrelated, args.trials = 1000, 10_000, 3
    only = set(args.only or ("appends", "concurrency", "resume", "listing", "takeover", "delivery"))
    schema = f"bench_{uuid.uuid4().hex[:12]}"
    scratch = Path(tempfile.mkdtemp(prefix="bench-postgres-", dir=args.dir))
    with psycopg.connect(args.dsn, autocommit=True) as conn:
        server = conn.execute("SHOW server_version").fetchone()
        fsync = conn.execute("SHOW fsync").fetchone()
        sync_commit = conn.execute("SHOW synchronous_commit").fetchone()
    print(
        f"machine: {platform.machine()} {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, JSON backend {BACKEND}; PostgreSQL "
        f"{server[0] if server else '?'} (fsync={fsync[0] if fsync else '?'}, "
        f"synchronous_commit={sync_commit[0] if sync_commit else '?'}), schema {schema}; "
        f"JSONL scratch {scratch}"
    )
    started = time.perf_counter()
    backends = Backends(args.dsn, schema, scratch)
    try:
        if "appends" in only:
            bench_appends(backends, args.sessions, args.appends, args.repeat)
            bench_components(args.dsn, schema, backends.pg, args.components)
        if "concurrency" in only:
            bench_concurrency(
                args.dsn, schema, args.sessions, args.appends, args.delay_ms, args.repeat
            )
        if "resume" in only:
            bench_resume(args.dsn, schema, scratch, args.resume_hosts, args.runs * 40)
        if "listing" in only:
            asyncio.run(bench_listing(backends, args))
        if "takeover" in only:
            bench_takeover(args.dsn, schema, args.ttl, args.trials, args.poll)
        if "delivery" in only:
            bench_delivery(args.dsn, schema, args.notifies)
    finally:
        backends.pg.close()
        drop_schema(args.dsn, schema)
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"total {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
