"""Approval requests and ``ask_user`` questions at the real command line: denied with one
line when there is no terminal; asked inline and answered on a pseudo-terminal with
``--plain`` (the terminal client has its own tests: tests/cli/test_terminal_client.py)."""

from __future__ import annotations

import asyncio
import io
import json
import os
import pty
import re
import select
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from host.approvals.requests import Answer, ApprovalRequest
from host.cli.approve import NOT_UTF8, Lines, TerminalAsker, chosen, decision, interpret
from host.sessions.model import ApprovalOrigin
from tests.cli.support import AGENT_HOST, agent_host, root_log
from tests.distributions import write_distribution

SHELL_SOURCE = '''
from host import hookimpl
from host.tools import tool


@tool(needs_approval=True)
async def shell(cmd: str) -> str:
    """Run a shell command (pretend)."""
    return f"ran {cmd}"


@hookimpl
def register_tools(register):
    register(shell)
'''

RM = {"name": "shell", "arguments": {"cmd": "rm -rf build"}}
CHOICES = " — [y]es / [a]lways / [n]o "


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A site with the ``shell`` tool (needs approval), and a user home without a policy."""
    site = tmp_path / "site"
    write_distribution(
        site,
        "pretend-shell",
        entry_points={"pretend_shell": "pretend_shell"},
        modules={"pretend_shell": SHELL_SOURCE},
    )
    return {"PYTHONPATH": str(site), "AGENT_HOST_HOME": str(tmp_path / "home")}


def write_script(tmp_path: Path, entries: list[Any]) -> str:
    (tmp_path / "script.json").write_text(json.dumps({"user": entries}))
    return "script.json"


def test_without_a_terminal_a_request_is_denied_with_one_line(tmp_path, env):
    script = write_script(tmp_path, [{"tool_calls": [RM]}, "Not allowed, then."])
    result = agent_host("run", "--script", script, "clean up", cwd=tmp_path, stdin="", **env)
    assert (result.returncode, result.stdout) == (0, "Not allowed, then.\n")
    assert re.fullmatch(
        r'⏺ shell \{"cmd": "rm -rf build"\}\n'
        r"agent-host: approval denied \(no terminal to ask\): agent_[0-9a-f]{32} \(user, depth 0\)"
        r' wants to run shell \{"cmd": "rm -rf build"\}\n'
        r"  ✗ the user denied shell: no terminal to ask\n",
        result.stderr,
    ), result.stderr
    log = root_log(tmp_path)
    assert "  ✗ the user denied shell: no terminal to ask" in log
    assert not any("ran rm" in line for line in log)


def test_without_a_terminal_a_question_is_not_answered(tmp_path, env):
    ask = {"name": "ask_user", "arguments": {"question": "Which colour?"}}
    script = write_script(tmp_path, [{"tool_calls": [ask]}, "No answer."])
    result = agent_host("run", "--script", script, "pick", cwd=tmp_path, stdin="", **env)
    assert result.returncode == 0
    call, denied, result_line = result.stderr.splitlines()
    assert call == '⏺ ask_user {"question": "Which colour?"}'
    assert denied.startswith("agent-host: approval denied (no terminal to ask): agent_")
    assert denied.endswith(" (user, depth 0) asks: Which colour?")
    assert result_line == "  ✗ the user did not answer: no terminal to ask"
    assert "  ✗ the user did not answer: no terminal to ask" in root_log(tmp_path)


class Terminal:
    """``agent-host chat --plain`` (or ``dev --plain``) with stdin and stdout on a
    pseudo-terminal, stderr piped: plain lines, approval requests asked inline."""

    def __init__(self, tmp_path: Path, env: dict[str, str], *args: str) -> None:
        environ = {
            k: v for k, v in os.environ.items() if not k.startswith(("AGENT_HOST_", "OPENAI_"))
        }
        environ.update(env, NO_COLOR="1")
        self.master, follower = pty.openpty()
        command = [AGENT_HOST, "--data-dir", str(tmp_path / "data"), *args]
        self.process = subprocess.Popen(
            command,
            stdin=follower,
            stdout=follower,
            stderr=subprocess.PIPE,
            env=environ,
            cwd=tmp_path,
        )
        os.close(follower)
        self.seen = b""

    def until(self, text: str, timeout: float = 30) -> str:
        """The output up to and including ``text``."""
        wanted, deadline = text.encode(), time.monotonic() + timeout
        while wanted not in self.seen:
            ready, _, _ = select.select([self.master], [], [], deadline - time.monotonic())
            if not ready:
                raise TimeoutError(f"no {text!r} in {self.seen!r}")
            self.seen += os.read(self.master, 4096)
        end = self.seen.index(wanted) + len(wanted)
        shown, self.seen = self.seen[:end], self.seen[end:]
        return shown.decode().replace("\r\n", "\n")

    def type(self, line: str) -> None:
        os.write(self.master, f"{line}\n".encode())

    def paste(self, text: str) -> None:
        """``text`` in one write, as a paste or quick typing delivers it."""
        os.write(self.master, text.encode())

    def close(self) -> tuple[int, str]:
        """Type ``/exit``; the exit code and stderr."""
        self.type("/exit")
        code = self.process.wait(30)
        assert self.process.stderr is not None
        err = self.process.stderr.read().decode()
        os.close(self.master)
        return code, err


@pytest.fixture
def terminal(tmp_path: Path, env: dict[str, str]):
    opened: list[Terminal] = []

    def start(*args: str) -> Terminal:
        opened.append(Terminal(tmp_path, env, *args))
        return opened[-1]

    yield start
    for made in opened:
        if made.process.poll() is None:
            made.process.kill()
            made.process.wait()


def test_a_terminal_asks_inline_and_yes_no_and_always_decide(tmp_path, terminal):
    script = write_script(
        tmp_path,
        [
            {"tool_calls": [RM]},
            "one",
            {"tool_calls": [{"name": "shell", "arguments": {"cmd": "pwd"}}]},
            "two",
            {"tool_calls": [{"name": "shell", "arguments": {"cmd": "ls"}}]},
            "three",
            {"tool_calls": [RM]},
            "four",
        ],
    )
    chat = terminal("chat", "--plain", "--script", script)
    chat.until("you> ")
    chat.type("first")
    asked = chat.until(CHOICES)
    assert re.search(
        r'agent_[0-9a-f]{32} \(user, depth 0\) wants to run shell \{"cmd": "rm -rf build"\}'
        + re.escape(CHOICES)
        + "$",
        asked,
    ), asked
    chat.type("y")
    assert chat.until("you> ").endswith("y\none\nyou> ")
    chat.type("second")
    assert 'wants to run shell {"cmd": "pwd"}' in chat.until(CHOICES)
    chat.type("n not now")
    assert chat.until("you> ").endswith("n not now\ntwo\nyou> ")
    chat.type("third")
    assert 'wants to run shell {"cmd": "ls"}' in chat.until(CHOICES)
    chat.type("maybe")  # not a decision: asked again
    assert chat.until(CHOICES).startswith("maybe\n")
    chat.type("a")
    chat.until("three\r\nyou> ")
    chat.type("fourth")  # shell is approved for the session: not asked again
    assert chat.until("you> ").endswith("fourth\nfour\nyou> ")
    assert chat.close() == (0, "")
    log = root_log(tmp_path)
    assert [line for line in log if line.startswith(("  ← ", "  ✗ "))] == [
        "  ← ran rm -rf build",
        "  ✗ the user denied shell: not now",
        "  ← ran ls",
        "  ← ran rm -rf build",
    ]


def test_at_the_question_a_command_that_looks_runs_and_one_that_acts_is_a_reply(
    tmp_path, terminal
):
    chat = asked_rm(tmp_path, terminal)
    chat.type("/help")
    assert "/exit" in chat.until(CHOICES)  # the list, then the question again
    chat.type("/exit")  # acts: not an answer, asked again
    chat.until(CHOICES)
    chat.type("y")
    chat.until("ok\r\nyou> ")
    assert chat.close() == (0, "")
    assert "  ← ran rm -rf build" in root_log(tmp_path)


def asked_rm(tmp_path: Path, terminal: Any) -> Terminal:
    """``chat --plain`` at the question whether to run ``rm -rf build`` (then it says ok)."""
    script = write_script(tmp_path, [{"tool_calls": [RM]}, "ok"])
    chat: Terminal = terminal("chat", "--plain", "--script", script)
    chat.until("you> ")
    chat.type("go")
    chat.until(CHOICES)
    return chat


def test_a_bare_no_gives_the_default_reason(tmp_path, terminal):
    chat = asked_rm(tmp_path, terminal)
    chat.type("no")
    chat.until("ok\r\nyou> ")
    assert chat.close() == (0, "")
    assert "  ✗ the user denied shell: the user said no" in root_log(tmp_path)


COLOUR = {
    "name": "ask_user",
    "arguments": {"question": "Which colour?", "choices": ["red", "blue"]},
}


def asked_colour(tmp_path: Path, terminal: Any) -> Terminal:
    """``chat --plain`` whose agent asks ``Which colour?`` (red or blue) on the first line."""
    script = write_script(tmp_path, [{"tool_calls": [COLOUR]}, "Blue it is."])
    chat: Terminal = terminal("chat", "--plain", "--script", script)
    chat.until("you> ")
    chat.type("pick")
    return chat


def test_a_question_is_answered_by_a_choice_number(tmp_path, terminal):
    chat = asked_colour(tmp_path, terminal)
    assert chat.until("? [1 red / 2 blue] ").endswith(
        " (user, depth 0) asks: Which colour? [1 red / 2 blue] "
    )
    chat.type("2")
    chat.until("Blue it is.\r\nyou> ")
    assert chat.close() == (0, "")
    assert "  ← blue" in root_log(tmp_path)


def test_at_a_question_a_command_that_looks_runs_and_one_that_acts_is_asked_again(
    tmp_path, terminal
):
    chat = asked_colour(tmp_path, terminal)
    chat.until("? [1 red / 2 blue] ")
    chat.type("/agents")  # looks: the tree, then the question again
    chat.until("? [1 red / 2 blue] ")
    chat.type("/send sub_1 hurry")  # acts: not an answer, asked again
    chat.until("? [1 red / 2 blue] ")
    chat.type("/exit")
    chat.until("? [1 red / 2 blue] ")
    chat.type("1")
    chat.until("Blue it is.\r\nyou> ")
    assert chat.close() == (0, "")
    assert "  ← red" in root_log(tmp_path)


def test_dev_asks_at_the_terminal_too(tmp_path, terminal):
    script = write_script(tmp_path, [{"tool_calls": [RM]}, "Cleaned."])
    dev = terminal("dev", "--plain", "--script", script)
    dev.until("you> ")
    dev.type("clean up")
    assert 'wants to run shell {"cmd": "rm -rf build"}' in dev.until(CHOICES)
    dev.type("yes")
    dev.until("Cleaned.\r\nyou> ")
    code, err = dev.close()
    assert code == 0, err
    assert "  ← ran rm -rf build" in root_log(tmp_path)


def test_a_reply_typed_right_after_an_unclear_one_answers_the_request(tmp_path, terminal):
    script = write_script(tmp_path, [{"tool_calls": [RM]}, "Cleaned."])
    run = terminal("run", "--script", script, "clean up")
    run.until(CHOICES)
    run.paste("maybe\ny\n")  # one write: "y" arrives before the request is asked again
    shown = run.until("Cleaned.\r\n")
    assert shown.startswith("maybe\ny\n"), shown  # the terminal's echo
    # asked again; "y" is shown there too when it had arrived before the question was
    asked_again = re.escape('wants to run shell {"cmd": "rm -rf build"}' + CHOICES)
    assert re.search(asked_again + r"(y\n)?Cleaned\.\n$", shown), shown
    assert run.process.wait(30) == 0
    assert "  ← ran rm -rf build" in root_log(tmp_path)


def test_an_answer_typed_right_after_an_empty_line_answers_the_question(tmp_path, terminal):
    chat = asked_colour(tmp_path, terminal)
    chat.until("? [1 red / 2 blue] ")
    chat.paste("\n2\n")
    chat.until("Blue it is.\r\nyou> ")
    assert chat.close() == (0, "")
    assert "  ← blue" in root_log(tmp_path)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("y", ("approved", None)),
        ("YES", ("approved", None)),
        ("a", ("approved_for_session", None)),
        ("always", ("approved_for_session", None)),
        ("n", ("denied", "the user said no")),
        ("no  not now ", ("denied", "not now")),
        ("yes please", None),
        ("", None),
        ("x", None),
    ],
)
def test_replies_and_their_decisions(reply, expected):
    answer = decision(reply)
    assert (None if answer is None else (answer.decision, answer.reason)) == expected


def test_a_number_picks_a_choice_and_anything_else_is_the_answer():
    assert chosen(" 1\n", ("red", "blue")) == "red"
    assert chosen("3", ("red", "blue")) == "3"
    assert chosen("green", ("red", "blue")) == "green"
    assert chosen("2", None) == "2"


def test_at_a_question_a_command_decides_nothing_and_a_path_is_an_answer():
    question = request("Which directory?")
    for command in ("/exit\n", "/send sub_1 hurry", " /interrupt", "/model big", "/show sub_1"):
        assert interpret(question, command) is None
    answer = interpret(question, "/usr/local\n")
    assert answer is not None and answer.answer == "/usr/local"


def request(question: str | None = None) -> ApprovalRequest:
    origin = ApprovalOrigin("sub_1", "sub_1", 2, "research changes")
    return ApprovalRequest("apr_1", "shell", {"cmd": "ls"}, "call_1", origin, "root", question)


async def test_a_typed_line_goes_to_the_request_being_asked_not_the_conversation():
    read_end, write_end = os.pipe()
    lines = Lines(os.fdopen(read_end, "r"))
    os.write(write_end, b"typed ahead\n")
    assert await lines.get() == "typed ahead\n"
    conversation = asyncio.ensure_future(lines.get())
    await asyncio.sleep(0)
    assert lines.prompting
    answer = asyncio.ensure_future(lines.answer())
    await asyncio.sleep(0)
    os.write(write_end, b"y\n")
    assert await answer == "y\n"
    assert not conversation.done()
    os.write(write_end, b"hello\n")
    assert await conversation == "hello\n"
    os.close(write_end)
    assert (await lines.get(), await lines.answer()) == ("", "")


async def test_asked_at_the_prompt_it_starts_a_new_line_and_shows_the_prompt_again():
    read_end, write_end = os.pipe()
    lines, out, err = Lines(os.fdopen(read_end, "r")), io.StringIO(), io.StringIO()
    asker = TerminalAsker(lines, out, err, before=lambda: None, prompt="you> ")
    conversation = asyncio.ensure_future(lines.get())
    await asyncio.sleep(0)
    asking = asyncio.ensure_future(asker(request()))
    await asyncio.sleep(0.05)
    os.write(write_end, b"n\n")
    answer = await asking
    assert (answer.decision, answer.reason) == ("denied", "the user said no")
    assert out.getvalue() == (
        '\nsub_1 (research changes, depth 2) wants to run shell {"cmd": "ls"}'
        " — [y]es / [a]lways / [n]o you> "
    )
    os.close(write_end)
    assert await conversation == ""


async def test_a_request_closed_while_asked_says_so_and_frees_the_next_line():
    read_end, write_end = os.pipe()
    lines, out, err = Lines(os.fdopen(read_end, "r")), io.StringIO(), io.StringIO()
    asker = TerminalAsker(lines, out, err, before=lambda: None, prompt="you> ")
    asking = asyncio.ensure_future(asker(request("Which colour?")))
    await asyncio.sleep(0.05)
    asking.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asking
    assert out.getvalue() == "sub_1 (research changes, depth 2) asks: Which colour? \n"
    assert err.getvalue() == (
        "agent-host: no longer waiting for an answer: "
        "sub_1 (research changes, depth 2) asks: Which colour?\n"
    )
    os.write(write_end, b"red\n")
    assert await lines.get() == "red\n"
    os.close(write_end)


async def test_a_line_that_is_not_utf8_is_dropped_with_one_line_and_the_next_one_counts(capfd):
    read_end, write_end = os.pipe()
    lines = Lines(os.fdopen(read_end, "r", encoding="utf-8"))
    os.write(write_end, b"\xff\xfe broken\ny\n")
    assert await lines.answer() == "y\n"
    os.close(write_end)
    assert await lines.get() == ""
    assert capfd.readouterr().err == f"{NOT_UTF8}\n"


async def test_a_reply_too_long_at_approve_decides_nothing_and_is_asked_again():
    read_end, write_end = os.pipe()
    lines, out, err = Lines(os.fdopen(read_end, "r")), io.StringIO(), io.StringIO()
    asker = TerminalAsker(lines, out, err, before=lambda: None, prompt="you> ")
    asking = asyncio.ensure_future(asker(request()))
    await asyncio.sleep(0.05)
    os.write(write_end, b"n " + b"x" * 100_000 + b"\ny\n")
    assert await asyncio.wait_for(asking, 10) == Answer.approve()
    assert err.getvalue() == (
        "agent-host: a reply of 100002 characters is too long (at most 4096); asked again\n"
    )
    assert out.getvalue().count("wants to run shell") == 2
    os.close(write_end)
