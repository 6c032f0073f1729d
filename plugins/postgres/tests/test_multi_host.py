"""Several real host processes over one PostgreSQL database (docs/persistence.md, "PostgreSQL").

Each host is a separate process running ``multi_host.py`` (its docstring: the line protocol),
driven step by step over stdin/stdout. The lease time to live is short (``TTL``) so that the
only sleep — waiting for a paused host's lease to expire — stays short; a killed host's leases
are pinned alive right after the kill and expired when the test says (``set_expiry``), so no
assertion races the end of a lease; every other wait polls a condition with a deadline. Every process still running at the end of a test is
killed (the ``spawn`` fixture), whatever the outcome.

Most scenarios start alike (``parent_moves_to_b``): host A creates the root ``R`` and starts the
continuable child ``W`` (label ``worker``) whose model call is held, so W stays resident and
running on A. A then disposes R (which releases R's lease while W stays resident on A) and host
B resumes R: B holds W's durable parent while A holds W.

1. ``list_agents`` on B shows running / idle / ready for children held by A, and ready once A
   was killed and its leases expired.
2. After A is SIGKILLed and its lease expired, a followup from B cold-resumes W on B under a
   higher epoch; nothing A acknowledged is lost. (A message sent *before* the expiry is queued
   for A and, once the lease expired, delivered by B itself: see the last test.)
3. A SIGSTOPped host whose lease was taken over cannot write again after SIGCONT (LOCKED),
   nor speak for the sessions it lost: its child's settlement notice reaches no root.
4. Cross-host delivery: send_message from B reaches W on A; report from W on A reaches R on B.

Plus: an orderly exit releases the host's leases at once.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from agent_host_postgres import DSN_ENV

from tests import profile
from tests.support import wait_until

SERVERS = ["fsync=off", *(["fsync=on"] if profile.SLOW else [])]
"""The kill trials run against the test server (``fsync=off``, for speed) and, in the slow
profile, once more against a server that syncs its WAL (the ``durable_dsn`` fixture)."""

SCRIPT = Path(__file__).with_name("multi_host.py")
TTL = 1.0
EXPIRY = TTL + 0.4  # a lease outlives its host's last heartbeat by at most TTL
STARTUP = 60.0
REPLY = 20.0


class HostProcess:
    """One ``multi_host.py`` process: ``host(op, **args)`` sends a command, returns its reply."""

    def __init__(self, name: str, dsn: str, schema: str, base: Path) -> None:
        self.name = name
        self.stderr_path = base / f"{name}.stderr"
        env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_HOST_")}
        env[DSN_ENV] = dsn
        self._stderr = self.stderr_path.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, str(SCRIPT), str(base / name), schema, str(TTL)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env=env,
        )
        self.pid = self.proc.pid
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.host_id = ""

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _reply(self, timeout: float, what: str) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"host {self.name}: no reply to {what} in {timeout}s") from None
        if line is None:
            raise AssertionError(
                f"host {self.name} exited ({self.proc.poll()}) instead of answering {what}:\n"
                + self.stderr()
            )
        try:
            reply: dict[str, Any] = json.loads(line)
        except ValueError:
            raise AssertionError(f"host {self.name} wrote a non-protocol line: {line!r}") from None
        return reply

    def wait_ready(self) -> None:
        ready = self._reply(STARTUP, "startup")
        assert ready.get("ready") is True, ready
        self.host_id = ready["host_id"]

    def __call__(self, op: str, *, timeout: float = REPLY, **args: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"op": op, **args}) + "\n")
        self.proc.stdin.flush()
        reply = self._reply(timeout, op)
        assert reply.get("ok") is True, f"host {self.name}: {op} {args} failed: {reply}"
        return reply

    def stderr(self) -> str:
        self._stderr.flush()
        return self.stderr_path.read_text()

    def signal(self, signum: int) -> None:
        os.kill(self.pid, signum)

    def kill(self) -> None:
        self.signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def exit(self) -> int:
        """Close the host in order (``exit``) and return the process's exit status."""
        assert self(op="exit")["op"] == "exit"
        return self.proc.wait(timeout=REPLY)

    def close(self) -> None:
        """Kill the process if it still runs (a stopped one too); close the pipes."""
        if self.proc.poll() is None:
            self.signal(signal.SIGCONT)
            self.proc.kill()
            self.proc.wait(timeout=10)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self._stderr.close()


Spawn = Callable[..., tuple[HostProcess, ...]]


@pytest.fixture
def spawn(dsn: str, schema: str, tmp_path: Path) -> Iterator[Spawn]:
    """``spawn("a", "b")`` starts those host processes together; all are killed at the end."""
    started: list[HostProcess] = []

    def make(*names: str) -> tuple[HostProcess, ...]:
        made = [HostProcess(name, dsn, schema, tmp_path) for name in names]
        started.extend(made)
        for host in made:
            host.wait_ready()
        return tuple(made)

    try:
        yield make
    finally:
        for host in started:
            host.close()


# -- helpers -----------------------------------------------------------------------------------


def lease(dsn: str, schema: str, session_id: str) -> dict[str, Any]:
    """The lease row of ``session_id``, with ``live`` judged by the database clock."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            f"SELECT owner, epoch, status, expires_at > now() FROM {schema}.leases"
            " WHERE session_id = %s",
            (session_id,),
        ).fetchone()
    assert row is not None, f"no lease row for {session_id}"
    return {"owner": row[0], "epoch": int(row[1]), "status": row[2], "live": row[3]}


def set_expiry(dsn: str, schema: str, owner: str, interval: str) -> None:
    """Make every lease ``owner`` holds expire at ``now() + interval`` (database clock).

    The test's clock for a killed host: right after the kill its leases are pinned alive (as a
    lease is for up to ``TTL`` after the last heartbeat, however long the test then takes on a
    loaded machine), and a negative interval is the expiry, at a moment the test chooses.
    """
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            f"UPDATE {schema}.leases SET expires_at = now() + %s::interval WHERE owner = %s",
            (interval, owner),
        )


def outlive(dsn: str, schema: str, host: HostProcess) -> None:
    """``host`` was just killed: its leases live on until ``expire`` (see ``set_expiry``)."""
    set_expiry(dsn, schema, host.host_id, "1 hour")


def expire(dsn: str, schema: str, host: HostProcess) -> None:
    """The leases of the killed ``host`` expire now (see ``set_expiry``)."""
    set_expiry(dsn, schema, host.host_id, "-1 second")


def sleep_until(moment: float) -> None:
    time.sleep(max(0.0, moment - time.monotonic()))


def kinds(events: list[dict[str, Any]]) -> list[str]:
    return [e["kind"] for e in events]


def accepted(events: list[dict[str, Any]], **match: Any) -> list[dict[str, Any]]:
    """The ``inbox/accepted`` events whose fields equal ``match`` (``source_kind`` included)."""
    found = []
    for event in events:
        if event["kind"] != "inbox/accepted":
            continue
        fields = {**event, "source_kind": (event.get("source") or {}).get("kind")}
        if all(fields.get(key) == value for key, value in match.items()):
            found.append(event)
    return found


def parent_moves_to_b(a: HostProcess, b: HostProcess, *labels: str) -> list[str]:
    """A: root R and held children (``labels``, default ``worker``: running, resident on A);
    then R moves to B. Returns the children's ids."""
    a("create_root", id="R")
    children = [
        str(a("start_child", parent="R", label=label)["child_id"])
        for label in labels or ("worker",)
    ]
    refused = b("resume_root", id="R")  # A holds R's lease: B cannot take it
    assert refused["code"] == "LOCKED", refused
    a("dispose", id="R")  # releases R's session and lease; the children stay resident on A
    assert b("resume_root", id="R")["code"] is None
    return children


# -- 1. status across hosts --------------------------------------------------------------------


def test_list_agents_on_b_shows_children_resident_on_a(spawn, dsn, schema) -> None:
    """Statuses of children held by another host come from their leases (exact strings)."""
    a, b = spawn("a", "b")
    worker, other = parent_moves_to_b(a, b, "worker", "other")

    def listed(scope: str = "children") -> str:
        reply = b("list", parent="R", scope=scope)
        assert reply["is_error"] is False
        return str(reply["text"])

    # Both children are in a held turn on A: B reads "running" from their leases.
    assert listed() == f"{worker} [running] — worker\n{other} [running] — other"
    assert b("list", parent="R")["rows"] == [
        {"kind": "child", "id": worker, "label": "worker", "status": "running"},
        {"kind": "child", "id": other, "label": "other", "status": "running"},
    ]

    # W starts a held child H of its own and ends its turn: W stays resident on A, idle
    # (waiting for H). "other" ends its turn and settles on A: its lease is released.
    helper = a("start_child", parent=worker, label="helper")["child_id"]
    a("release", label="worker", say="waiting for helper")
    a("release", label="other", say="other done")
    a("wait_idle", id=worker)
    a("wait_settled", id=other)
    assert a("status", id=worker)["resident"] is True
    assert lease(dsn, schema, other)["owner"] is None
    tree = (
        f"{worker} [idle] parent=R depth=1 — worker\n"
        f"{helper} [running] parent={worker} depth=2 — helper\n"
        f"{other} [ready] parent=R depth=1 — other"
    )
    assert listed("descendants") == tree

    # A dies: its leases outlive it until they expire, then everything is "ready".
    a.kill()
    outlive(dsn, schema, a)
    assert listed("descendants") == tree
    expire(dsn, schema, a)
    assert not lease(dsn, schema, worker)["live"]
    assert listed("descendants") == (
        f"{worker} [ready] parent=R depth=1 — worker\n"
        f"{helper} [ready] parent={worker} depth=2 — helper\n"
        f"{other} [ready] parent=R depth=1 — other"
    )
    assert b.exit() == 0


# -- 2. takeover after SIGKILL -----------------------------------------------------------------


@pytest.mark.parametrize("dsn", SERVERS, indirect=True)
def test_a_child_of_a_killed_host_is_taken_over_without_losing_events(spawn, dsn, schema) -> None:
    """SIGKILL A; after expiry a followup from B resumes W on B (higher epoch), losing nothing."""
    a, b = spawn("a", "b")
    a("create_root", id="R")
    worker = a("start_child", parent="R", label="worker")["child_id"]
    # W reports once to R (live on A), then its next model call is held.
    a("hold", label="worker")
    a("release", label="worker", report="finding 1")
    a("wait_entered", label="worker")
    a("wait_idle", id="R")  # R handled the report
    a("dispose", id="R")
    assert b("resume_root", id="R")["code"] is None
    acked = a("events", id=worker)["events"]  # every event A's writer acknowledged
    assert acked[-1]["kind"] == "message" and acked[-1]["role"] == "tool"
    before = lease(dsn, schema, worker)
    assert (before["owner"], before["status"], before["live"]) == (a.host_id, "running", True)

    a.kill()
    outlive(dsn, schema, a)

    # Until A's lease expires, B sees W as A's (running) and does not touch it.
    assert b("list", parent="R")["rows"][0]["status"] == "running"
    assert lease(dsn, schema, worker)["owner"] == a.host_id

    expire(dsn, schema, a)
    sent = b("send", parent="R", child=worker, text="continue on B")
    assert sent["code"] is None
    b("wait_settled", id=worker)

    stored = b("stored", id=worker)["events"]
    assert stored[: len(acked)] == acked  # nothing A acknowledged was lost
    rest = stored[len(acked) :]
    open_turn = next(e for e in reversed(acked) if e["kind"] == "turn/start")["turn_id"]
    assert rest[0]["kind"] == "turn/end"
    assert (rest[0]["turn_id"], rest[0]["stop_reason"]) == (open_turn, "interrupted")
    assert accepted(rest, message_id=sent["message_id"], content="continue on B")
    assert kinds(rest[1:]) == [
        "inbox/accepted",
        "turn/start",
        "inbox/claimed",
        "message",
        "message",
        "turn/end",
    ]
    assert rest[-2]["content"] == "worker saw: continue on B"
    assert rest[-1]["stop_reason"] == "completed"
    # The conversation continued: B's model saw A's part of it.
    seen = b("requests", label="worker")["requests"]
    assert len(seen) == 1
    assert seen[0][0] == ["user", "work as worker"]
    assert seen[0][-1] == ["user", "continue on B"]
    assert any(role == "tool" and "report accepted" in text for role, text in seen[0])
    after = lease(dsn, schema, worker)
    assert after["epoch"] > before["epoch"] and after["owner"] is None  # settled on B
    # W settled on B and told R there.
    notices = accepted(b("events", id="R")["events"], source_kind="subagent-settled")
    assert [n["source"]["sender_session_id"] for n in notices] == [worker]
    assert b.exit() == 0


# -- 3. fencing of a paused host ---------------------------------------------------------------


def test_a_paused_host_cannot_write_after_a_takeover(spawn, dsn, schema) -> None:
    """SIGSTOP A past expiry, B takes W over, SIGCONT: A's appends are refused (LOCKED)."""
    a, b = spawn("a", "b")
    (worker,) = parent_moves_to_b(a, b)
    acked = a("events", id=worker)["events"]
    epoch_a = lease(dsn, schema, worker)["epoch"]

    a.signal(signal.SIGSTOP)
    paused = time.monotonic()
    sleep_until(paused + EXPIRY)
    b("hold", label="worker")  # W's turn on B stays open: B keeps a live lease
    sent = b("send", parent="R", child=worker, text="taken over")
    assert sent["code"] is None
    b("wait_entered", label="worker")
    taken = lease(dsn, schema, worker)
    assert (taken["owner"], taken["live"]) == (b.host_id, True)
    assert taken["epoch"] > epoch_a
    on_b = b("events", id=worker)["events"]
    assert on_b[: len(acked)] == acked

    a.signal(signal.SIGCONT)
    a("release", label="worker", say="late from A")  # A's held call answers: A appends
    a("wait_settled", id=worker)
    # A's appends were refused (LOCKED): A wrote nothing, B's lease stands.
    assert b("stored", id=worker)["events"] == on_b
    assert lease(dsn, schema, worker) == taken
    state = a("status", id=worker)
    assert (state["agent"], state["resident"]) == (None, False)
    assert [o["stop_reason"] for o in state["outcomes"]] == ["error"]
    assert "taken over by another host" in state["outcomes"][0]["error"]
    # Each refusal is one line with the error's text and code, no traceback.
    refusals = [r for r in a("log")["records"] if r["message"].endswith("(LOCKED)")]
    assert refusals and all("taken over" in r["message"] for r in refusals)
    assert all(r["exc"] is None for r in refusals)

    # B goes on: its turn ends, W settles on B; nothing of A's is in the log.
    b("release", label="worker", say="done on B")
    b("wait_settled", id=worker)
    stored = b("stored", id=worker)["events"]
    assert stored[: len(on_b)] == on_b
    assert all("late from A" not in json.dumps(e) for e in stored)
    assert stored[-2]["content"] == "done on B"
    assert a.exit() == 0
    assert b.exit() == 0


def notices(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return accepted(events, source_kind="subagent-settled")


def test_a_paused_host_cannot_speak_for_a_child_it_lost(spawn, dsn, schema) -> None:
    """A holds R and W; SIGSTOP A past expiry, B takes R and W over, SIGCONT: W's failed turn
    on A settles there, but its settlement notice is fenced by W's lease (taken by B): R's log
    on B is unchanged by A, B runs no turn on it, and A logs one line."""
    a, b = spawn("a", "b")
    a("create_root", id="R")
    worker = a("start_child", parent="R", label="worker")["child_id"]
    epoch_a = lease(dsn, schema, worker)["epoch"]

    a.signal(signal.SIGSTOP)
    sleep_until(time.monotonic() + EXPIRY)
    assert b("resume_root", id="R")["code"] is None  # B takes the root over
    b("hold", label="worker")  # W's turn on B stays open: W stays live on B
    assert b("send", parent="R", child=worker, text="taken over")["code"] is None
    b("wait_entered", label="worker")
    assert lease(dsn, schema, worker)["owner"] == b.host_id
    assert lease(dsn, schema, worker)["epoch"] > epoch_a
    root_on_b = b("stored", id="R")["events"]

    a.signal(signal.SIGCONT)
    a("release", label="worker", say="late from A")  # A's W appends: refused, its turn fails
    a("wait_settled", id=worker)
    line = f"settlement notice of subagent {worker} not sent"

    def fenced() -> list[dict[str, Any]]:
        records = a("log")["records"]
        return [r for r in records if r["message"].startswith(line)]

    def outcome() -> Any:
        return fenced() or notices(b("stored", id="R")["events"]) or queued_messages(dsn, schema)

    wait_until(outcome, "A's settlement notice to be refused or sent")
    assert notices(b("stored", id="R")["events"]) == []
    assert queued_messages(dsn, schema) == []
    (record,) = fenced()
    assert record["message"] == (
        f'{line}: session "{worker}" was taken over by another host since this host held it; '
        "nothing was sent on its behalf (LOCKED)"
    )
    assert record["exc"] is None
    # R on B ran no turn on anything of A's; W is still live on B and finishes there.
    assert b("stored", id="R")["events"] == root_on_b
    assert b("status", id="R")["outcomes"] == []
    b("release", label="worker", say="done on B")
    b("wait_settled", id=worker)
    (notice,) = wait_until(lambda: notices(b("stored", id="R")["events"]), "W's notice on B")
    assert notice["source"]["sender_session_id"] == worker
    assert "failed" not in notice["content"]
    assert a.exit() == 0
    assert b.exit() == 0


# -- orderly shutdown --------------------------------------------------------------------------


def test_a_host_that_exits_in_order_releases_its_leases(spawn, dsn, schema) -> None:
    """After an orderly exit, another host need not wait for the leases to expire."""
    a, b = spawn("a", "b")
    (worker,) = parent_moves_to_b(a, b)
    acked = a("events", id=worker)["events"]
    assert a.exit() == 0
    released = lease(dsn, schema, worker)
    assert (released["owner"], released["live"]) == (None, False), released
    stored = b("stored", id=worker)["events"]
    assert stored[: len(acked)] == acked
    assert stored[len(acked) :][0]["kind"] == "turn/end"  # the held turn ended: interrupted
    sent = b("send", parent="R", child=worker, text="right away")
    assert sent["code"] is None
    b("wait_settled", id=worker)


# -- 4. delivery across hosts (cross-host delivery) --------------------------------------------


def test_send_message_from_b_is_delivered_to_a_child_resident_on_a(spawn, dsn, schema) -> None:
    """B's send_message for W (resident on A) lands in W's log on A with B's message id."""
    a, b = spawn("a", "b")
    (worker,) = parent_moves_to_b(a, b)
    sent = b("send", parent="R", child=worker, text="hello from B", via="tool")
    assert sent["is_error"] is False, sent["text"]
    message_id = sent["message_id"]

    def delivered() -> list[dict[str, Any]]:
        return accepted(a("events", id=worker)["events"], message_id=message_id)

    (event,) = wait_until(delivered, "the message in W's log on A", timeout=5.0)
    assert event["content"] == "hello from B"
    assert event["source"] == {"kind": "coordinator", "sender_session_id": "R"}
    assert lease(dsn, schema, worker)["owner"] == a.host_id  # W stayed on A
    a("release", label="worker", say="first turn done")
    a("wait_settled", id=worker)
    seen = a("requests", label="worker")["requests"]
    assert seen[-1][-1] == ["user", "hello from B"]  # W's next turn saw it
    stored = a("stored", id=worker)["events"]
    assert stored[-2]["content"] == "worker saw: hello from B"


def test_report_from_a_reaches_the_parent_live_on_b(spawn, dsn, schema) -> None:
    """W on A reports while R is live on B: R's log on B accepts it, with the same id."""
    a, b = spawn("a", "b")
    (worker,) = parent_moves_to_b(a, b)
    a("hold", label="worker")
    a("release", label="worker", report="finding from A")
    a("wait_entered", label="worker")  # the report's tool result is in W's next request
    result = a("requests", label="worker")["requests"][-1][-1]
    assert result[0] == "tool"
    assert result[1].startswith("report accepted by the agent that started you as message "), result
    message_id = result[1].rsplit(" ", 1)[-1]

    def reported() -> list[dict[str, Any]]:
        events = b("events", id="R")["events"]
        return accepted(events, source_kind="subagent-report", message_id=message_id)

    (event,) = wait_until(reported, "the report in R's log on B", timeout=5.0)
    assert event["source"]["sender_session_id"] == worker
    assert "finding from A" in event["content"]


def queued_messages(dsn: str, schema: str) -> list[tuple[str, str]]:
    """``(message_id, session_id)`` of every message waiting in ``remote_inbox``."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            f"SELECT message_id, session_id FROM {schema}.remote_inbox ORDER BY seq"
        ).fetchall()
    return [(str(m), str(s)) for m, s in rows]


@pytest.mark.parametrize("dsn", SERVERS, indirect=True)
def test_a_message_sent_while_a_dead_hosts_lease_lives_is_delivered_after_expiry(
    spawn, dsn, schema
) -> None:
    """SIGKILL A; B's send before the expiry is queued (no error), nothing is written; after
    the expiry B, its sender, resumes W and delivers it with the id it handed out."""
    a, b = spawn("a", "b")
    (worker,) = parent_moves_to_b(a, b)
    acked = a("events", id=worker)["events"]
    epoch_a = lease(dsn, schema, worker)["epoch"]
    a.kill()
    outlive(dsn, schema, a)

    # A's lease on W still lives: the message is queued for A, nothing is written to W's log.
    sent = b("send", parent="R", child=worker, text="sent while A's lease lived", via="tool")
    assert sent["is_error"] is False, sent["text"]
    assert sent["text"] == f"message queued as the next turn for subagent {worker}"
    message_id = sent["message_id"]
    assert lease(dsn, schema, worker)["live"]
    assert queued_messages(dsn, schema) == [(message_id, worker)]
    assert b("stored", id=worker)["events"] == acked
    assert b("status", id=worker)["agent"] is None
    expire(dsn, schema, a)

    # Once it expired, B (the sender, with R live) resumes W itself and delivers it, same id.
    def delivered() -> list[dict[str, Any]]:
        return accepted(b("stored", id=worker)["events"], message_id=message_id)

    (event,) = wait_until(delivered, "the queued message in W's log", timeout=TTL + 10.0)
    assert event["content"] == "sent while A's lease lived"
    wait_until(lambda: b("stored", id=worker)["events"][-1]["kind"] == "turn/end", "W's turn")
    b("wait_settled", id=worker)
    stored = b("stored", id=worker)["events"]
    assert stored[: len(acked)] == acked
    assert stored[-2]["content"] == "worker saw: sent while A's lease lived"
    assert queued_messages(dsn, schema) == []
    assert lease(dsn, schema, worker)["epoch"] > epoch_a
