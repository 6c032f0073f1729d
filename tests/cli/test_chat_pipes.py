"""``agent-host chat`` over pipes: plain lines, the same slash commands as on a terminal,
mistakes as one ``agent-host:`` line on stderr, and the exit codes of before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_host_openai.testing import Reply, rejection_body

from tests.cli.support import agent_host


def chat(tmp_path: Path, script: dict[str, Any], *lines: str) -> Any:
    (tmp_path / "script.json").write_text(json.dumps(script))
    stdin = "".join(f"{line}\n" for line in lines)
    return agent_host("chat", "--script", "script.json", cwd=tmp_path, stdin=stdin)


FOREGROUND = {
    "name": "subagent",
    "arguments": {"description": "counter", "prompt": "Count to three.", "run_in_background": False},
}


def test_slash_commands_answer_on_stdout_and_mistakes_are_one_line_on_stderr(tmp_path):
    result = chat(
        tmp_path,
        {"user": ["Hello there."]},
        "/help",
        "/agents",
        "/frobnicate now",
        "/show nobody",
        "hello",
        "/model",
        "/exit",
        "never sent",
    )
    assert result.returncode == 0
    out = result.stdout.replace("you> ", "")
    assert "/show ID         a subagent's transcript (followed live while it runs)\n" in out
    assert "/reload" not in out  # dev only
    assert "(no subagents)\nHello there.\nmodel: scripted (available: scripted)\n" in out
    assert result.stderr == (
        "agent-host: unknown command /frobnicate (/help lists the commands)\n"
        "agent-host: no agent 'nobody' in this conversation (/agents lists them)\n"
    )


def test_agents_and_show_over_pipes_after_a_child_settled(tmp_path):
    script = {
        "user": [{"tool_calls": [FOREGROUND]}, "The counter said three."],
        "counter": ["one, two, three"],
    }
    result = chat(tmp_path, script, "count please", "/agents", "/show counter", "/show sub_")
    assert result.returncode == 0, result.stderr
    out = result.stdout.replace("you> ", "")
    assert "The counter said three.\n" in out
    (row,) = [line for line in out.splitlines() if line.startswith("counter  sub_")]
    child = row.split()[1]
    assert row == f"counter  {child}  [ended]"  # a foreground child does not continue
    assert f"── counter ({child}) · ended ──\n" in out
    assert "user (task from you): Count to three.\n" in out
    assert "assistant: one, two, three\n" in out
    assert "subagent descriptor" not in out  # the transcript is the conversation
    assert out.count(f"── counter ({child})") == 2  # a unique id prefix names it too
    assert result.stderr == ""


def test_a_failed_turn_still_exits_1_and_a_slash_mistake_does_not(tmp_path, server):
    server.reply(Reply(400, rejection_body("context too long")))
    result = agent_host(
        "chat",
        cwd=tmp_path,
        stdin="/nope\ngo\n",
        OPENAI_BASE_URL=server.url,
        AGENT_HOST_MODEL="m1",
    )
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines[0] == "agent-host: unknown command /nope (/help lists the commands)"
    assert lines[1].startswith("agent-host: turn ended (error): model server ")


def test_a_slash_mistake_alone_exits_0(tmp_path):
    result = agent_host("chat", cwd=tmp_path, stdin="/nope\n")
    assert result.returncode == 0
    assert result.stderr.endswith("agent-host: unknown command /nope (/help lists the commands)\n")


def test_a_line_that_is_not_utf8_is_one_line_and_the_chat_goes_on(tmp_path):
    import os
    import subprocess

    from host.cli.approve import NOT_UTF8
    from tests.cli.support import AGENT_HOST

    (tmp_path / "script.json").write_text(json.dumps({"user": ["Hello there."]}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_HOST_", "OPENAI_"))}
    result = subprocess.run(
        [AGENT_HOST, "--data-dir", str(tmp_path / "data"), "chat", "--script", "script.json"],
        input=b"\xff\xfe oops\nhello\n", capture_output=True, cwd=tmp_path, env=env, timeout=120,
    )
    assert result.returncode == 0
    assert result.stdout.decode().endswith("Hello there.\nyou> ")
    assert result.stderr.decode() == f"{NOT_UTF8}\n"
