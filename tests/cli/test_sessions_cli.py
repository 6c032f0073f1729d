"""``agent-host sessions``: real logs written by a real host, read by the CLI in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from host.agents.scripted import call, say
from host.sessions.jsonl import JsonlPersistence
from host.sessions.model import SessionHeader
from host.testing import build_host
from tests.cli.support import capped_agent_host

AGENT_HOST = str(Path(sys.executable).parent / "agent-host")


def cli(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_HOST_")}
    env["NO_COLOR"] = "1"
    return subprocess.run(
        [AGENT_HOST, "--data-dir", str(data_dir), "sessions", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        cwd=data_dir.parent,
    )


async def write_sessions(data_dir: Path) -> None:
    host = build_host(data_dir=data_dir)
    try:
        scripted = host.services.models.resolve("scripted")
        scripted.script("writer", call("word_count", text="a b c"), say("three words"))
        agents = host.services.agents
        root = await agents.create(SessionHeader(id="root", created_at=1), label="writer")
        root.followup("count please")
        await root.wait_idle()
        host.services.sessions.fork("root", new_id="side")
    finally:
        await host.aclose()


async def test_list_show_and_tree(tmp_path):
    data_dir = tmp_path / "data"
    await write_sessions(data_dir)

    listed = json.loads(cli(data_dir, "list", "--json").stdout)
    assert [row["id"] for row in listed] == ["root", "side"]
    assert listed[1]["parent_session"] == "root"
    assert listed[1]["seed_length"] > 0

    shown = cli(data_dir, "show", "root")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0].startswith("session root (")
    assert "user: count please" in lines
    assert "assistant: three words" in lines
    assert "  [turn ended: completed]" in lines

    assert cli(data_dir, "tree").stdout.splitlines() == ["root", "  side [fork]"]


def test_bad_ids_and_missing_sessions_are_one_line_errors(tmp_path):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    hostile = cli(data_dir, "show", "../etc/passwd")
    assert hostile.returncode == 2
    assert hostile.stderr.startswith("agent-host: error: invalid session id '../etc/passwd'")
    missing = cli(data_dir, "show", "nope")
    assert (missing.returncode, missing.stderr) == (
        2,
        "agent-host: error: session 'nope' is not stored\n",
    )
    assert cli(data_dir, "list").stdout.strip() == "(no sessions)"
    assert list(data_dir.iterdir()) == []


async def write_family(data_dir: Path) -> tuple[str, str]:
    """A root with a settled continuable child, then a corrupt child; the good child's log torn."""
    from host.sessions.model import SubagentDescriptorEvent
    from host.subagents.types import ChildRequest

    host = build_host(data_dir=data_dir)
    try:
        host.services.models.resolve("scripted").script("scout", say("scouted"))
        root = await host.services.agents.create(
            SessionHeader(id="root", created_at=1), label="boss"
        )
        started = await host.services.subagents.start_continuable(
            "spawn", ChildRequest(prompt="look around"), parent=root, label="scout"
        )
        activation = host.services.subagents.manager().activation(started.child_id)
        await activation.wait_done()
        await root.wait_idle()
        store = host.services.sessions
        broken = store.new(
            SessionHeader(id="broken", parent_session="root", origin="subagent", created_at=2),
            seed=[SubagentDescriptorEvent({"version": 2, "mode": "weird"})],
        )
        store.publish(broken)
        store.release("broken")
    finally:
        await host.aclose()
    with (data_dir / f"{started.child_id}.jsonl").open("ab") as log:
        log.write(b'{"seq": 99, "kind": "mess')  # a torn last line
    return started.child_id, "broken"


async def test_a_corpus_with_a_corrupt_child_and_a_torn_file(tmp_path):
    data_dir = tmp_path / "data"
    child_id, broken = await write_family(data_dir)
    before = {p.name: p.read_bytes() for p in data_dir.glob("*.jsonl")}

    tree = cli(data_dir, "tree")
    assert tree.returncode == 0, tree.stderr
    assert tree.stdout.splitlines() == [
        "root",
        f"  {broken} [diagnostic: corrupt]",  # created first (created_at=2)
        f"  {child_id} [continuable] — scout",
    ]
    shown = cli(data_dir, "show", child_id)
    assert shown.returncode == 0, shown.stderr
    assert "assistant: scouted" in shown.stdout.splitlines()
    assert cli(data_dir, "list").returncode == 0
    assert {p.name: p.read_bytes() for p in data_dir.glob("*.jsonl")} == before  # read-only


def test_a_data_dir_that_is_a_file_is_one_line(tmp_path):
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    result = cli(not_a_dir, "list")
    assert (result.returncode, result.stderr) == (
        2,
        f"agent-host: error: data directory {not_a_dir} is not a directory\n",
    )
    assert not_a_dir.read_text() == "x"


def test_a_log_that_is_a_device_or_a_fifo_is_one_line(tmp_path):
    data_dir = tmp_path / "data"  # where capped_agent_host keeps sessions: in the project
    data_dir.mkdir()
    (data_dir / "zero.jsonl").symlink_to("/dev/zero")  # an endless read would take all memory
    os.mkfifo(data_dir / "fifo.jsonl")  # nobody writes: a blocking open waits forever
    expected = {
        "zero": "is a character device (a link to /dev/zero), not a regular file",
        "fifo": "is a FIFO, not a regular file",
    }
    for session_id, why in expected.items():
        shown = capped_agent_host("sessions", "show", session_id, cwd=tmp_path)
        assert (shown.returncode, shown.stderr) == (
            2,
            f"agent-host: error: cannot open session {session_id!r}: "
            f"{data_dir / session_id}.jsonl: {why}\n",
        )
    listed = capped_agent_host("sessions", "list", cwd=tmp_path)
    assert (listed.returncode, listed.stdout, listed.stderr) == (0, "(no sessions)\n", "")


@contextmanager
def waiting_writer(fifo: Path) -> Iterator[threading.Event]:
    """A thread opening ``fifo`` for writing, which waits until someone opens it for reading:
    the event is set once that happened. Released (by a reader of our own) on exit."""
    started, opened = threading.Event(), threading.Event()

    def write() -> None:
        started.set()
        os.close(os.open(fifo, os.O_WRONLY))
        opened.set()

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    started.wait()
    try:
        yield opened
    finally:
        reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        writer.join(timeout=30)
        os.close(reader)


def test_a_listing_opens_no_device_or_fifo_named_like_a_log(tmp_path):
    data_dir = tmp_path / "data"  # where capped_agent_host keeps sessions: in the project
    header = SessionHeader(id="real", created_at=1)
    JsonlPersistence(data_dir, fsync="never").open_writer(header, create=True).close()
    (data_dir / "abc.jsonl").symlink_to("/dev/zero")  # an endless read would take all memory
    (data_dir / "rnd.jsonl").symlink_to("/dev/urandom")
    os.mkfifo(data_dir / "fifo.jsonl")
    with waiting_writer(data_dir / "fifo.jsonl") as opened:
        for _ in range(2):  # the second from the header cache file
            listed = capped_agent_host("sessions", "list", cwd=tmp_path)
            assert (listed.returncode, listed.stderr) == (0, "")
            assert [line.split()[0] for line in listed.stdout.splitlines()[2:]] == ["real"]
        assert not opened.is_set()  # the listing never opened the FIFO


def test_the_tree_shows_a_multi_line_note_on_one_line():
    from host.cli.sessions import tree_lines

    headers = [
        SessionHeader(id="root", created_at=1),
        SessionHeader(id="kid", parent_session="root", origin="subagent", created_at=2),
    ]
    notes = {"kid": "[continuable] — count\nthe words\n"}
    assert tree_lines(headers, notes) == ["root", "  kid [continuable] — count ⏎ the words"]
