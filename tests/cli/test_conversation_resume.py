"""Leaving a conversation with a request open, and coming back to it: Ctrl-D at the question
is its denial; every other way out leaves it open, to be asked again by ``chat --continue``
(after a kill too); ``--resume`` of what cannot be resumed is one line and exit 2. The
terminal client runs in tmux (``tests.cli.tmux``); the logs are read back with ``sessions``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.cli.support import agent_host
from tests.cli.test_terminal_client import client, root_id, sessions, shown, start_child

__all__ = ["client"]  # the fixture, shared with the other terminal client tests

MAKE = {"name": "shell", "arguments": {"cmd": "make"}}
STILL_OPEN = (
    "agent-host: 1 request still open; it will be asked again when this conversation resumes"
)


def decisions(tmp_path: Path, session_id: str) -> list[dict[str, Any]]:
    """The ``approval/decided`` events of a stored session."""
    listed = agent_host("sessions", "show", session_id, "--json", cwd=tmp_path)
    (document,) = json.loads(listed.stdout)
    return [e for e in document["events"] if e["kind"] == "approval/decided"]


def close(pane: Any) -> None:
    """Close ``pane`` and wait until its tmux server answers no more, so the next pane of the
    test can start a server on the same socket."""
    pane.close()
    for _ in range(300):
        listed = subprocess.run(
            [pane.tmux, "-S", pane.socket, "list-sessions"], capture_output=True, timeout=30
        )
        if listed.returncode != 0:
            return
        time.sleep(0.05)
    raise AssertionError(f"the tmux server of {pane.socket} did not exit")


def asking(pane: Any) -> None:
    """Wait until the pane asks the ``shell make`` request at ``approve>``."""
    pane.wait_for('wants to run shell {"cmd": "make"}')
    pane.wait_for(lambda _s: "approve>" in pane.visible())


def test_ctrl_d_at_the_question_is_the_end_of_input_denial(client, tmp_path):
    pane = client({"user": [{"tool_calls": [MAKE]}, "Never."]}, "chat")
    pane.type("build it")
    asking(pane)
    pane.keys("C-d")
    assert pane.exit_code() == 0
    root = root_id(tmp_path)
    (decided,) = decisions(tmp_path, root)
    assert (decided["decision"], decided["reason"]) == ("denied", "no answer (end of input)")
    close(pane)
    again = client({"user": []}, "chat", "--continue")
    again.keys("C-d")
    assert again.exit_code() == 0
    log = shown(tmp_path, root)
    assert "  ✗ the user denied shell: no answer (end of input)" in log
    assert "interrupted before it finished" not in log


def test_leaving_with_the_question_open_keeps_it_for_chat_continue(client, tmp_path):
    pane = client({"user": [{"tool_calls": [MAKE]}, "Never."]}, "chat")
    pane.type("build it")
    asking(pane)
    pane.keys("C-c")  # at the question, Ctrl-C interrupts nothing
    pane.wait_for("press Ctrl-C again to exit")
    pane.keys("C-c")
    assert pane.exit_code() == 0
    assert STILL_OPEN in pane.screen()
    root = root_id(tmp_path)
    assert decisions(tmp_path, root) == []
    close(pane)
    again = client({"user": ["Made it."]}, "chat", "--continue", ready="approve>")
    screen = again.wait_for(f"resuming conversation {root}")
    assert "user: build it" in screen
    asking(again)
    again.type("y")
    again.wait_for("Made it.")
    again.keys("C-d")
    assert again.exit_code() == 0
    assert "  ← ran make" in shown(tmp_path, root)


def test_sigterm_with_the_question_open_keeps_it_too(client, tmp_path):
    pane = client({"user": [{"tool_calls": [MAKE]}, "Never."]}, "chat")
    pane.type("build it")
    asking(pane)
    os.kill(pane.pid(), signal.SIGTERM)
    assert pane.exit_code() == 143
    assert STILL_OPEN in pane.screen()
    assert decisions(tmp_path, root_id(tmp_path)) == []


def test_a_killed_conversation_with_a_child_goes_on_with_chat_continue(client, tmp_path):
    pane = client({
        "user": [{"tool_calls": [start_child("scout")]}, "Started.", {"tool_calls": [MAKE]}],
        "scout": ["Scouted."],
    }, "chat")
    pane.type("scout, then build")
    pane.wait_for(lambda _s: "1 settled" in pane.status())
    asking(pane)
    root = root_id(tmp_path)
    locked = agent_host("chat", "--continue", cwd=tmp_path, stdin="")
    assert locked.returncode == 2
    assert locked.stderr == (
        f"agent-host: error: cannot resume {root}: session '{root}' is locked by another writer"
        " (another host or process) (LOCKED)\n"
    )
    os.kill(pane.pid(), signal.SIGKILL)
    pane.exit_code()
    close(pane)
    again = client({"user": ["Built."]}, "chat", "--continue", ready="approve>")
    screen = again.wait_for(f"resuming conversation {root}")
    assert "user: scout, then build" in screen and "assistant: Started." in screen
    asking(again)
    again.wait_for(lambda _s: "subagents: 1 settled" in again.status())
    again.type("y")
    again.wait_for("Built.")
    again.keys("C-d")
    assert again.exit_code() == 0
    assert "  ← ran make" in shown(tmp_path, root)
    assert len([row for row in sessions(tmp_path) if not row["origin"]]) == 1


def refused(tmp_path: Path, *args: str) -> str:
    """The one line ``agent-host ARGS`` refuses with (exit 2), checking nothing was stored."""
    before = sorted(row["id"] for row in sessions(tmp_path)) if (tmp_path / "data").exists() else []
    result = agent_host(*args, cwd=tmp_path, stdin="")
    assert (result.returncode, result.stdout, result.stderr.count("\n")) == (2, "", 1), result
    after = sorted(row["id"] for row in sessions(tmp_path)) if (tmp_path / "data").exists() else []
    assert after == before
    return result.stderr


def test_continue_in_an_empty_data_directory_is_one_line(tmp_path):
    data = tmp_path / "data"
    assert refused(tmp_path, "chat", "--continue") == (
        f"agent-host: error: no conversation to continue in {data}\n"
    )
    assert not data.exists()


def test_resuming_an_unknown_or_corrupt_session_is_one_line(tmp_path):
    unknown = "agent_0123456789abcdef0123456789abcdef"
    assert refused(tmp_path, "run", "--resume", unknown, "hello") == (
        f"agent-host: error: cannot resume {unknown}: session '{unknown}' is not stored"
        " (NOT_FOUND)\n"
    )
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / f"{unknown}.jsonl").write_text("not a log\n")
    line = refused(tmp_path, "chat", "--resume", unknown)
    assert line.startswith(f"agent-host: error: cannot resume {unknown}: session '{unknown}'")
    assert line.endswith(" (CORRUPT)\n")
    assert (tmp_path / "data" / f"{unknown}.jsonl").read_text() == "not a log\n"


def test_resuming_a_subagent_session_names_its_root(tmp_path):
    script = {"user": [{"tool_calls": [start_child("scout")]}, "Started.", "Heard."],
              "scout": ["Scouted."]}
    (tmp_path / "script.json").write_text(json.dumps(script))
    made = agent_host("run", "--script", "script.json", "scout", cwd=tmp_path, stdin="")
    assert made.returncode == 0, made.stderr
    root = root_id(tmp_path)
    child = next(row["id"] for row in sessions(tmp_path) if row["origin"])
    assert refused(tmp_path, "chat", "--resume", child) == (
        f"agent-host: error: session {child} is a subagent's session;"
        f" resume its root conversation {root}\n"
    )


def test_run_resume_sends_the_prompt_to_the_stored_conversation(tmp_path):
    (tmp_path / "script.json").write_text(json.dumps({"user": ["First.", "Second."]}))
    first = agent_host("run", "--script", "script.json", "one", cwd=tmp_path, stdin="")
    root = root_id(tmp_path)
    (tmp_path / "script.json").write_text(json.dumps({"user": ["Second."]}))
    second = agent_host(
        "run", "--resume", root, "two", "--script", "script.json", cwd=tmp_path, stdin=""
    )
    assert (first.returncode, second.returncode) == (0, 0), second.stderr
    assert second.stdout == "Second.\n"
    assert [row["id"] for row in sessions(tmp_path)] == [root]
    log = shown(tmp_path, root)
    assert log.index("user: one") < log.index("assistant: First.") < log.index("user: two")


def test_at_an_open_request_the_commands_that_look_still_work(client, tmp_path):
    pane = client({
        "user": [{"tool_calls": [start_child("cleaner")]}, "Started.", "Heard back."],
        "cleaner": [{"tool_calls": [MAKE]}, "Cleaned."],
    }, "chat")
    pane.type("clean up")
    asking(pane)
    child = next(row["id"] for row in sessions(tmp_path) if row["origin"])
    pane.type("/agents")
    pane.wait_for(f"{child}")
    pane.type(f"/show {child}")
    screen = pane.wait_for("[asked the user: ")
    assert f'[asked the user: {child} (cleaner, depth 1) wants to run shell {{"cmd": "make"}}]' in (
        screen
    )
    assert screen.count("wants to run shell") == 2  # the question, and the transcript's line
    pane.type("/interrupt")  # a command that acts is the reply: not one, so asked again
    pane.wait_for(lambda s: s.count("— [y]es / [a]lways / [n]o") == 2)
    pane.type("a")
    pane.wait_for("Heard back.")
    pane.keys("C-d")
    assert pane.exit_code() == 0
    log = shown(tmp_path, child)
    assert "  [approved for the session: shell]" in log and "  ← ran make" in log


def test_continue_takes_the_conversation_active_last_which_sessions_list_shows(tmp_path):
    def run(*args: str) -> None:
        (tmp_path / "script.json").write_text(json.dumps({"user": ["Noted."]}))
        done = agent_host("run", "--script", "script.json", *args, cwd=tmp_path, stdin="")
        assert done.returncode == 0, done.stderr

    run("first")
    (older,) = [row["id"] for row in sessions(tmp_path)]
    run("second")
    run("--resume", older, "third")  # the older conversation is now the one active last
    (tmp_path / "script.json").write_text(json.dumps({"user": []}))
    chat = agent_host("chat", "--continue", "--script", "script.json", cwd=tmp_path, stdin="")
    assert chat.stdout.startswith(f"resuming conversation {older}\nuser: first\n"), chat
    listed = agent_host("sessions", "list", cwd=tmp_path).stdout.splitlines()
    assert listed[0].split() == ["session", "kind", "created", "last", "activity", "parent"]
    rows = {line.split()[0]: line.split() for line in listed[2:]}
    assert [row[1] for row in rows.values()] == ["root", "root"]
    newer = next(session for session in rows if session != older)
    assert rows[older][4:6] >= rows[newer][4:6]  # its last activity: date and time


def test_a_dev_restart_keeps_the_open_question_and_asks_it_again(client, tmp_path):
    pane = client({"user": [{"tool_calls": [MAKE]}, "Done."]}, "dev", "--restart")
    pane.type("build it")
    asking(pane)
    (tmp_path / "site" / "pane_tools.py").touch()  # --restart: any change restarts
    pane.wait_for("restarting: ")
    pane.wait_for(STILL_OPEN)
    pane.wait_for(lambda s: s.count('wants to run shell {"cmd": "make"}') == 2)
    pane.wait_for(lambda _s: "approve>" in pane.visible())
    root = root_id(tmp_path)
    assert decisions(tmp_path, root) == []  # nothing recorded across the restart
    pane.type("y")
    pane.wait_for("⎿ ran make")
    (decided, *_) = decisions(tmp_path, root)
    assert decided["decision"] == "approved"


def test_a_killed_conversation_whose_child_waits_asks_again_with_chat_continue(client, tmp_path):
    pane = client({"user": [{"tool_calls": [start_child("scout")]}, "Started."],
                   "scout": [{"tool_calls": [MAKE]}, "Never."]}, "chat")
    pane.type("scout it")
    pane.wait_for("Started.")
    asking(pane)
    root = root_id(tmp_path)
    (child,) = [row["id"] for row in sessions(tmp_path) if row["origin"]]
    os.kill(pane.pid(), signal.SIGKILL)
    pane.exit_code()
    close(pane)
    again = client({"user": ["Got the report."], "scout": ["Scouted."]}, "chat", "--continue",
                   ready="approve>")
    again.wait_for(f"resuming conversation {root}")
    asking(again)
    again.type("y")
    again.wait_for("Got the report.")
    again.keys("C-d")
    assert again.exit_code() == 0
    assert shown(tmp_path, child).count("  ← ran make") == 1
    for session_id in (child, root):
        (decided,) = decisions(tmp_path, session_id)
        assert decided["decision"] == "approved"
    assert "Scouted." in shown(tmp_path, root)  # its report reached the root


def test_a_dev_restart_asks_a_waiting_childs_request_again_and_it_goes_on(client, tmp_path):
    pane = client({"user": [{"tool_calls": [start_child("scout")]}, "Started."],
                   "scout": [{"tool_calls": [MAKE]}, "Never."]}, "dev", "--restart")
    pane.type("scout it")
    pane.wait_for("Started.")
    asking(pane)
    script = {"user": ["Got the report."], "scout": ["Scouted."]}  # the next process's
    (tmp_path / "script.json").write_text(json.dumps(script))
    (tmp_path / "site" / "pane_tools.py").touch()  # --restart: any change restarts
    pane.wait_for(STILL_OPEN)
    pane.wait_for(lambda s: s.count('wants to run shell {"cmd": "make"}') == 2)
    pane.wait_for(lambda _s: "approve>" in pane.visible())
    pane.type("y")
    pane.wait_for("Got the report.")
    (child,) = [row["id"] for row in sessions(tmp_path) if row["origin"]]
    assert shown(tmp_path, child).count("  ← ran make") == 1
