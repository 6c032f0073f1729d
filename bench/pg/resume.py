"""Resume of a 100-event session against a read-only ``inspect`` of it, on PostgreSQL and on
JSONL (``bench/resume.py``: first call in a fresh host, and steady)."""

from __future__ import annotations

from pathlib import Path

from agent_host_postgres.persistence import PostgresPersistence

from bench import resume
from host.sessions.jsonl import JsonlPersistence
from host.sessions.model import Event, SessionHeader

from .support import turn_body

EVENTS = 100


def bench_resume(dsn: str, schema: str, scratch: Path, samples: int, rounds: int) -> None:
    events = [Event(i, turn_body(i)) for i in range(EVENTS)]
    header = SessionHeader(id="hundred", created_at=1)
    print(f"resume against inspect ({samples} fresh hosts, {rounds} steady rounds)")
    pg = PostgresPersistence(dsn, schema=schema)
    try:
        pg.open_writer(header, create=True, events=events).close()
        setup = (
            "from agent_host_postgres.persistence import PostgresPersistence\n"
            f"def make():\n    return PostgresPersistence({dsn!r}, schema={schema!r})\n"
        )
        resume.measure("PostgreSQL", setup, pg, header.id, EVENTS, samples, rounds)
    finally:
        pg.close()
    data_dir = scratch / "resume"
    jsonl = JsonlPersistence(data_dir)
    jsonl.open_writer(header, create=True, events=events).close()
    setup = (
        "from host.sessions.jsonl import JsonlPersistence\n"
        f"def make():\n    return JsonlPersistence({str(data_dir)!r})\n"
    )
    resume.measure("JSONL", setup, jsonl, header.id, EVENTS, samples, rounds)
