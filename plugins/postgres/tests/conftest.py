"""Fixtures: a fresh PostgreSQL schema per test on the server named by
``AGENT_HOST_TEST_POSTGRES_DSN`` (skipped without it on a developer machine; an error under
``CI=true``), a server with ``fsync=on`` for the slow profile, a clean environment, and
appends grouped on purpose (``held_commits``), a database that can be cut and restored
(``proxy``), hosts on the ``postgres`` plugin with subagents (``make_postgres_host``)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import selectors
import socket
import subprocess
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import agent_host_postgres
import psycopg
import pytest
import tool_subagent_report.plugin as report_plugin
from agent_host_postgres import DSN_ENV, leases

from host.sessions.model import Event, EventBody
from host.sessions.session import Session
from host.testing import HostHarness
from tool_subagent_control import root as control_root

ROOT = Path(__file__).resolve().parents[3]

TEST_DSN_ENV = "AGENT_HOST_TEST_POSTGRES_DSN"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees the developer's own DSN or plugin selection."""
    for name in (DSN_ENV, "AGENT_HOST_DISABLE_PLUGINS", "AGENT_HOST_PLUGINS"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def dsn(request: pytest.FixtureRequest) -> str:
    """The test server's DSN, or ``durable_dsn``'s when parametrized (indirectly) with
    ``"fsync=on"``."""
    if getattr(request, "param", "fsync=off") == "fsync=on":
        return str(request.getfixturevalue("durable_dsn"))
    value = os.environ.get(TEST_DSN_ENV, "").strip()
    if value:
        return value
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but {TEST_DSN_ENV} is not set: the PostgreSQL tests must run")
    pytest.skip(f"{TEST_DSN_ENV} is not set")


@pytest.fixture(scope="session")
def durable_dsn() -> Iterator[str]:
    """A throwaway server with ``fsync=on``, started by ``.ci/postgres.sh`` (``PG_FSYNC=on``)
    for the session and stopped at its end."""
    script = 'source .ci/postgres.sh && echo "dsn $AGENT_HOST_TEST_POSTGRES_DSN" && read _'
    server = subprocess.Popen(
        ["bash", "-c", script],
        cwd=ROOT,
        env={**os.environ, "PG_FSYNC": "on"},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None
    try:
        for line in server.stdout:
            if line.startswith("dsn "):
                break
        else:
            pytest.fail(f".ci/postgres.sh could not start a server (exit {server.wait()})")
        value = line.split(" ", 1)[1].strip()
        with psycopg.connect(value, autocommit=True) as conn:
            row = conn.execute("SHOW fsync").fetchone()
        assert row is not None and row[0] == "on"
        yield value
    finally:
        server.stdin.close()  # the script's read returns; its exit trap stops the server
        server.wait(timeout=120)


@pytest.fixture
def schema(dsn: str) -> Iterator[str]:
    name = f"t_{uuid.uuid4().hex[:16]}"
    yield name
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


class HeldCommits:
    """Groups appends on purpose: in ``one_group`` the append thread is held inside a single
    append (the first one's) while the others are submitted, so they are written as one
    group. Records the session of every single append and the size of each group;
    ``on_group(size)`` runs just before a group is written."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.singles: list[str] = []
        self.groups: list[int] = []
        self.on_group: Callable[[int], None] = lambda size: None
        self._busy = threading.Event()
        self._busy.set()  # held only inside one_group
        single, together = leases.fenced_insert, leases.fenced_insert_many

        def held_single(conn: psycopg.Connection[Any], plan: dict[str, Any]) -> bool:
            self.singles.append(plan["sid"])
            self._busy.wait(10)
            return single(conn, plan)

        def counted(conn: psycopg.Connection[Any], plans: list[dict[str, Any]]) -> list[bool]:
            self.groups.append(len(plans))
            self.on_group(len(plans))
            return together(conn, plans)

        monkeypatch.setattr(leases, "fenced_insert", held_single)
        monkeypatch.setattr(leases, "fenced_insert_many", counted)

    async def one_group(
        self, first: Session, rest: Sequence[Session], body: EventBody
    ) -> list[Event | BaseException]:
        """``first`` appends ``body`` alone (holding the thread) while each of ``rest`` appends
        it; their results (an event or the error), once all are settled."""
        self._busy.clear()
        holder = asyncio.ensure_future(first.append_async(body))
        await asyncio.sleep(0.05)
        batch = [asyncio.ensure_future(session.append_async(body)) for session in rest]
        await asyncio.sleep(0.05)
        self._busy.set()
        await holder
        return await asyncio.gather(*batch, return_exceptions=True)


@pytest.fixture
async def make_postgres_host(
    dsn: str, schema: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Callable[[str], HostHarness]]:
    """Makes a host on the ``postgres`` plugin (``schema``) with the subagent control and
    report plugins, its data directory ``tmp_path / name``; each is closed at teardown."""
    monkeypatch.setenv(DSN_ENV, dsn)
    made: list[HostHarness] = []

    def make(name: str) -> HostHarness:
        harness = HostHarness(
            ("postgres", agent_host_postgres),
            ("subagent_control", control_root),
            ("subagent_report", report_plugin),
            data_dir=tmp_path / name,
            config={"plugins": {"postgres": {"schema": schema}}},
        )
        made.append(harness)
        return harness

    yield make
    for harness in made:
        await harness.close()


@pytest.fixture
def held_commits(monkeypatch: pytest.MonkeyPatch) -> HeldCommits:
    """``HeldCommits`` for the test (the statements are restored after it)."""
    return HeldCommits(monkeypatch)


class Proxy:
    """A TCP forwarder to the test server that can be cut (every connection dropped, new
    ones refused) and restored on the same port: the database 'goes away' and comes back."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.port = probe.getsockname()[1]
        probe.close()
        self._listener: socket.socket | None = None
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        self._cut_at: bytes | None = None

    def start(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen()
        with self._lock:
            self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            with self._lock:  # a cut while this connection was being made drops it too
                current = self._listener is listener
                if current:
                    self._open += [client, server]
            if not current:
                client.close()
                server.close()
                return
            threading.Thread(target=self._pump, args=(client, server), daemon=True).start()

    def cut_at_answer(self, answer: bytes) -> None:
        """Cut when the server answers with bytes containing ``answer``, before they reach
        the client: what it answered happened, and the client never learns of it."""
        self._cut_at = answer

    def _pump(self, a: socket.socket, b: socket.socket) -> None:
        sel = selectors.DefaultSelector()
        try:  # a cut may already have closed the pair
            sel.register(a, selectors.EVENT_READ, b)
            sel.register(b, selectors.EVENT_READ, a)
            while True:
                for key, _ in sel.select():
                    data = key.fileobj.recv(65536)
                    if not data:
                        return
                    answer = self._cut_at
                    if key.fileobj is b and answer is not None and answer in data:
                        self._cut_at = None
                        self.cut()
                        return
                    key.data.sendall(data)
        except (OSError, ValueError):
            return
        finally:
            a.close()
            b.close()

    def cut(self) -> None:
        with self._lock:
            listener, self._listener = self._listener, None
            dropped, self._open = self._open, []
        if listener is not None:
            with contextlib.suppress(OSError):  # wakes the thread blocked in accept()
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        for conn in dropped:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            conn.close()


@pytest.fixture
def proxy(dsn: str) -> Iterator[tuple[Proxy, str]]:
    parts = urlsplit(dsn)
    proxy = Proxy((parts.hostname or "127.0.0.1", parts.port or 5432))
    proxy.start()
    netloc = (
        f"{parts.username}@127.0.0.1:{proxy.port}" if parts.username else f"127.0.0.1:{proxy.port}"
    )
    yield proxy, urlunsplit(parts._replace(netloc=netloc))
    proxy.cut()
