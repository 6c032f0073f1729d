"""``agent-host chat`` and ``dev`` as a terminal client, driven in a real terminal (tmux) with
the scripted model: typing while a child runs, ``/show`` of a running child, Ctrl-C, approval
prompts, bad input. The session logs on disk are checked after each run: nothing typed or
acknowledged is lost."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.support import AGENT_HOST, agent_host
from tests.cli.tmux import Pane, require_tmux
from tests.distributions import write_distribution

TOOLS_SOURCE = '''
import asyncio
from pathlib import Path

from host import hookimpl
from host.tools import tool


@tool
async def hold(name: str) -> str:
    """Wait until a file called NAME exists in the working directory."""
    while not Path(name).exists():
        await asyncio.sleep(0.05)
    return f"released by {name}"


@tool
async def linger(name: str) -> str:
    """Wait forever; once stopped, take until a file called NAME exists to wind down."""
    try:
        await asyncio.Event().wait()
    finally:
        while not Path(name).exists():
            await asyncio.sleep(0.05)
    return "never"


@tool(needs_approval=True)
async def shell(cmd: str) -> str:
    """Run a shell command (pretend)."""
    return f"ran {cmd}"


@hookimpl
def register_tools(register):
    register(hold)
    register(linger)
    register(shell)
'''


def start_child(label: str) -> dict[str, Any]:
    arguments = {"description": label, "prompt": "Research it.", "run_in_background": True}
    return {"name": "subagent", "arguments": arguments}


def hold(name: str) -> dict[str, Any]:
    return {"name": "hold", "arguments": {"name": name}}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Any]:
    """Start ``agent-host ARGS`` in a tmux pane with the ``hold``, ``linger`` and ``shell``
    tools installed and ``script`` as the scripted model's file, once it shows ``ready``;
    every pane is closed at the end."""
    require_tmux()
    site = tmp_path / "site"
    write_distribution(
        site, "pane-tools", entry_points={"pane_tools": "pane_tools"},
        modules={"pane_tools": TOOLS_SOURCE},
    )
    panes: list[Pane] = []
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(PYTHONPATH=str(site), AGENT_HOST_HOME=str(tmp_path / "home"), LANG="C.UTF-8")

    def start(script: dict[str, Any], *args: str, width: int = 100, ready: str = "you>") -> Pane:
        (tmp_path / "script.json").write_text(json.dumps(script))
        command = [AGENT_HOST, "--data-dir", str(tmp_path / "data"), *args]
        panes.append(Pane(tmp_path, [*command, "--script", "script.json"], env, width=width))
        panes[-1].wait_for(ready)  # capture-pane drops trailing blanks
        return panes[-1]

    yield start
    for pane in panes:
        pane.close()


def sessions(tmp_path: Path) -> list[dict[str, Any]]:
    listed = agent_host("sessions", "list", "--json", cwd=tmp_path)
    rows: list[dict[str, Any]] = json.loads(listed.stdout)
    return rows


def shown(tmp_path: Path, session_id: str) -> str:
    return agent_host("sessions", "show", session_id, cwd=tmp_path).stdout


def root_id(tmp_path: Path) -> str:
    (root,) = [row["id"] for row in sessions(tmp_path) if not row["origin"]]
    return root


def test_typing_while_a_child_runs_and_following_it_live(client, tmp_path):
    pane = client({
        "user": [
            {"text": "Starting a researcher.", "tool_calls": [start_child("research")]},
            "The researcher is on it.",
            "Thanks for the report.",
            "Noted while it works.",
            "Noted the settlement.",
        ],
        "research": [
            {"tool_calls": [{"name": "report", "arguments": {"output": "Halfway: two found."}}]},
            {"tool_calls": [hold("go")]},
            "Research finished: three findings.",
        ],
    }, "chat")
    pane.type("please research")
    pane.wait_for("The researcher is on it.")
    screen = pane.wait_for("Thanks for the report.")
    report = "↳ report from research: Background subagent sub_"
    assert report in screen and "reported: ⏎ Halfway: two found." in screen
    pane.wait_for(lambda _s: "1 running (research" in pane.status())
    pane.type("a note while it works")  # the child still runs: the prompt takes it anyway
    pane.wait_for("Noted while it works.")
    pane.wait_for(lambda _s: "1 running (research" in pane.status())  # still running
    pane.type("/agents")
    pane.wait_for("[running]")
    pane.keys("/sh", "Tab")  # completes the command,
    pane.wait_for("you> /show")
    pane.keys(" re", "Tab")  # then the child's id from its label
    pane.wait_for("you> /show sub_")
    pane.keys("Enter")
    screen = pane.wait_for("following live")
    assert "── research (sub_" in screen and "· running ──" in screen
    assert "user (task from you): Research it." in screen
    assert "subagent descriptor" not in screen
    (tmp_path / "go").touch()
    screen = pane.wait_for("end of the live view of research (completed)")
    assert "│ research   ← released by go" in screen
    assert "│ research assistant: Research finished: three findings." in screen
    screen = pane.wait_for("Noted the settlement.")
    assert "◆ settled: research: " in screen
    pane.wait_for(lambda _s: "1 settled" in pane.status())
    pane.keys("C-d")
    assert pane.exit_code() == 0
    log = shown(tmp_path, root_id(tmp_path))
    assert "user: a note while it works" in log


def test_ctrl_c_interrupts_the_turn_and_a_second_within_two_seconds_exits(client, tmp_path):
    pane = client({
        "user": [
            {"text": "Thinking hard.", "tool_calls": [hold("never")]},
            "Answered after the interruption.",
        ],
    }, "chat")
    pane.type("go")
    pane.wait_for("⏺ hold")
    pane.wait_for(lambda _s: "agent working" in pane.status())
    pane.keys("C-c")
    screen = pane.wait_for("⏹ turn ended (interrupted)")
    assert "  ✗ tool call was interrupted before it finished" in screen
    pane.wait_for(lambda _s: "agent idle" in pane.status())
    pane.type("again")  # the conversation goes on after an interruption
    pane.wait_for("Answered after the interruption.")
    pane.keys("C-c", "C-c")  # together: the second is surely within the 2 s window
    assert pane.exit_code() == 0
    assert "press Ctrl-C again to exit" in pane.screen()  # what the first one said
    log = shown(tmp_path, root_id(tmp_path))
    assert "[turn ended: interrupted]" in log
    assert "assistant: Answered after the interruption." in log


@pytest.mark.parametrize("command", ["chat", "dev"])
def test_sigterm_closes_the_conversation_as_ctrl_c_and_exits_143(client, tmp_path, command):
    pane = client({"user": [{"text": "Thinking hard.", "tool_calls": [hold("never")]}]}, command)
    pane.type("go")
    pane.wait_for("⏺ hold")
    os.kill(pane.pid(), signal.SIGTERM)  # as kill, docker stop and systemd send it
    assert pane.exit_code() == 143
    screen = pane.screen()
    assert "agent-host: terminated" in screen and "Traceback" not in screen
    log = shown(tmp_path, root_id(tmp_path))
    assert log.rstrip().endswith(
        "  ✗ tool call was interrupted before it finished\n  [turn ended: interrupted]"
    )


def test_an_approval_prompt_names_the_child_that_asks(client, tmp_path):
    pane = client({
        "user": [{"tool_calls": [start_child("cleaner")]}, "Started.", "Heard back."],
        "cleaner": [
            {"tool_calls": [{"name": "shell", "arguments": {"cmd": "rm -rf build"}}]},
            "Could not clean.",
        ],
    }, "chat")
    pane.type("clean up")
    screen = pane.wait_for('(cleaner, depth 1) wants to run shell {"cmd": "rm -rf build"}')
    assert "— [y]es / [a]lways / [n]o" in screen
    pane.wait_for("approve>")
    pane.type("perhaps")  # not an answer: asked again
    pane.wait_for(lambda s: s.count("wants to run shell") == 2)
    pane.type("n not today")
    pane.wait_for("Heard back.")
    pane.keys("C-d")
    assert pane.exit_code() == 0
    child = next(row["id"] for row in sessions(tmp_path) if row["origin"])
    assert "  ✗ the user denied shell: not today" in shown(tmp_path, child)


def test_bad_input_is_one_line_and_loses_nothing(client, tmp_path):
    pane = client({"user": ["Got a long one.", "Still here."]}, "chat", width=100)
    pane.type("/frobnicate")
    pane.wait_for("unknown command /frobnicate (/help lists the commands)")
    pane.type("/show nobody")
    pane.wait_for("no agent 'nobody' in this conversation (/agents lists them)")
    pane.type("/send")
    pane.wait_for("usage: /send ID text")
    pane.resize(20, 12)
    pane.type("/help")
    pane.wait_for("/exit")
    pane.paste("y" * 1_000_000)
    pane.keys("Enter")
    pane.wait_for("Got a long one.", timeout=90)
    pane.resize(100, 30)
    pane.type("still there?")
    pane.wait_for("Still here.")
    pane.keys("C-d")
    assert pane.exit_code() == 0
    assert "Traceback" not in pane.screen()
    data = (tmp_path / "data" / f"{root_id(tmp_path)}.jsonl").read_text()
    assert "y" * 1_000_000 in data


def test_dev_offers_reload_in_the_terminal(client, tmp_path):
    pane = client({"user": ["Hello."]}, "dev")
    pane.keys("/rel", "Tab")
    pane.wait_for("you> /reload")
    pane.keys(" pane", "Tab")
    pane.wait_for("you> /reload pane_tools")
    pane.keys("Enter")
    pane.wait_for("reloaded pane_tools in ")
    pane.type("hi")
    pane.wait_for("Hello.")
    pane.type("/exit")
    assert pane.exit_code() == 0


def test_exiting_while_a_child_works_closes_it_at_a_turn_boundary(client, tmp_path):
    pane = client({
        "user": [{"tool_calls": [start_child("slowpoke")]}, "Started."],
        "slowpoke": [{"tool_calls": [hold("never")]}],
    }, "chat")
    pane.type("start it")
    pane.wait_for(lambda _s: "1 running (slowpoke" in pane.status())
    pane.keys("C-d")
    assert pane.exit_code() == 0
    assert "Traceback" not in pane.screen()
    child = next(row["id"] for row in sessions(tmp_path) if row["origin"])
    log = shown(tmp_path, child)
    assert '  → hold {"name": "never"}' in log
    assert "  ✗ tool call was interrupted before it finished" in log
    assert log.rstrip().endswith("[turn ended: interrupted]")


def test_after_a_dev_restart_the_resumed_root_knows_its_children(client, tmp_path):
    pane = client({
        "user": [{"tool_calls": [start_child("scout")]}, "Started.", "Scout is back."],
        "scout": ["Scouted."],
    }, "dev", "--restart")
    pane.type("scout please")
    pane.wait_for("Scout is back.")
    pane.wait_for(lambda _s: "1 settled" in pane.status())
    (tmp_path / "site" / "pane_tools.py").touch()  # --restart: any change restarts
    pane.wait_for("restarting: ")
    pane.wait_for(lambda s: s.count("agent-host: watching") == 2)
    pane.wait_for(lambda _s: "subagents: 1 settled" in pane.status())
    pane.keys("/show sc", "Tab")
    pane.wait_for("you> /show sub_")
    pane.keys("Enter")
    pane.wait_for("assistant: Scouted.")
    pane.type("/exit")
    assert pane.exit_code() == 0


def test_a_line_half_typed_when_an_approval_request_opens_is_kept_for_after(client, tmp_path):
    pane = client({
        "user": [
            {"tool_calls": [hold("go"), {"name": "shell", "arguments": {"cmd": "make"}}]},
            "Made it.",
            "Got your thought.",
        ],
    }, "chat")
    pane.type("build it")
    pane.wait_for('⏺ shell {"cmd": "make"}')
    pane.keys("-l", "half a thought")  # typing for the agent, not yet sent
    pane.wait_for("you> half a thought")
    (tmp_path / "go").touch()
    pane.wait_for("wants to run shell")
    pane.wait_for(lambda _s: "approve>" in pane.visible())  # nothing typed for the request
    pane.type("y")
    pane.wait_for("Made it.")
    pane.wait_for(lambda _s: "you> half a thought" in pane.visible())  # given back
    pane.keys(" to finish", "Enter")
    pane.wait_for("Got your thought.")
    pane.keys("C-d")
    assert pane.exit_code() == 0
    assert "user: half a thought to finish" in shown(tmp_path, root_id(tmp_path))


def test_ctrl_c_while_the_host_closes_waits_for_it_instead_of_a_traceback(client, tmp_path):
    linger = {"name": "linger", "arguments": {"name": "down"}}
    pane = client({"user": [{"tool_calls": [linger]}, "Never asked for."]}, "chat")
    pane.type("go")
    pane.wait_for('⏺ linger {"name": "down"}')
    pane.keys("C-d")  # the host closes: the tool is stopped and takes its time to wind down
    pane.wait_for("unconsumed entries")  # said as the conversation closes
    pane.keys("C-c")
    pane.wait_for("closing: waiting for the agents to stop")
    (tmp_path / "down").touch()
    assert pane.exit_code() == 0
    assert "Traceback" not in pane.screen()
    log = shown(tmp_path, root_id(tmp_path))
    assert log.rstrip().endswith("[turn ended: interrupted]")
