"""run_command: real processes, their output, limits, and nothing left running."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import time

from agent_host_workspace import command as commands
from agent_host_workspace.paths import Root

from host.testing import call
from tests.support import alive, soon


async def test_a_command_runs_in_the_root_without_a_shell(tree, workspace):
    h = workspace()
    result = await h.use("run_command", {"command": "ls src"})
    assert (result.text, result.is_error) == ("app.py\ngen\nkeep.log\nnotes.txt\n(exit status 0)", False)
    literal = await h.use("run_command", {"command": "echo '$HOME' $HOME; true"})
    assert literal.text == "$HOME $HOME; true\n(exit status 0)"  # no shell: nothing expanded
    shell = await h.use("run_command", {"command": "echo a | tr a b; exit 3", "shell": True})
    assert (shell.text, shell.is_error) == ("b\n(exit status 3)", True)
    silent = await h.use("run_command", {"command": "true"})
    assert silent.text == "(exit status 0)"


async def test_bad_commands_are_one_error_line(tree, workspace):
    h = workspace()
    for args, error in [
        ({"command": ""}, "command is empty"),
        ({"command": "echo 'unclosed"}, "command cannot be split into words: No closing quotation"),
        ({"command": "no-such-program-here"}, "cannot run 'no-such-program-here': No such file or directory"),
        ({"command": "true", "timeout": 0}, "timeout must be between 1 and 600 seconds"),
        ({"command": "true", "timeout": 601}, "timeout must be between 1 and 600 seconds"),
    ]:
        result = await h.use("run_command", args)
        assert (result.text, result.is_error) == (error, True)


async def test_a_command_that_never_ends_is_stopped_with_its_group(tree, workspace):
    h = workspace()
    script = "sleep 300 & echo $! > bg.pid; echo started; sleep 300"
    result = await h.use("run_command", {"command": script, "shell": True, "timeout": 1})
    assert (result.text, result.is_error) == ("started\n(timed out after 1 s; stopped)", True)
    background = int((tree.root / "bg.pid").read_text())
    assert await soon(lambda: not alive(background), timeout=30)


async def test_a_command_printing_without_end_is_stopped_at_the_cap(tree, workspace):
    h = workspace()
    result = await h.use("run_command", {"command": "yes"})  # would print without end
    assert result.is_error
    head, note, ending = result.text.rsplit("\n", 2)
    assert head == "\n".join(["y"] * 15_000)  # the first 30000 bytes
    assert note.startswith("… (output cut: ") and note.endswith(" bytes, the first 30000 shown)")
    assert int(note.split()[3]) > 1024 * 1024
    assert ending == "(output passed 1048576 bytes; stopped)"


async def test_what_a_command_leaves_running_is_killed_when_it_exits(tree, workspace):
    h = workspace()
    script = "sleep 300 & echo $! > bg.pid"
    result = await h.use("run_command", {"command": script, "shell": True})
    assert result.text == "(exit status 0)"
    background = int((tree.root / "bg.pid").read_text())
    assert await soon(lambda: not alive(background), timeout=30)


async def test_an_interrupted_command_leaves_no_process(tree, workspace):
    h = workspace()
    script = "sleep 300 & echo $! > bg.pid; echo $$ > sh.pid; wait"
    h.model.script("root", call("run_command", command=script, shell=True))
    root = await h.root("root")
    root.followup("run it")
    files = [tree.root / "sh.pid", tree.root / "bg.pid"]
    assert await soon(
        lambda: all(f.exists() and f.read_text().endswith("\n") for f in files), timeout=30
    )
    pids = [int(file.read_text()) for file in files]
    assert all(alive(pid) for pid in pids)
    root.interrupt()
    await root.wait_idle()
    assert await soon(lambda: not any(alive(pid) for pid in pids), timeout=30)
    assert h.approvals.asked[0].tool == "run_command"  # it ran because it was approved


async def test_a_command_interrupted_while_it_is_being_started_leaves_no_process(
    tree, monkeypatch
):
    files = [tree.root / "sh.pid", tree.root / "bg.pid"]
    popen = subprocess.Popen

    def started(*args, **kwargs):  # the interrupt arrives as asyncio connects the output
        process = popen(*args, **kwargs)
        for _ in range(600):  # the loop is blocked: the call waits inside asyncio's start
            if all(f.exists() and f.read_text().endswith("\n") for f in files):
                break
            time.sleep(0.05)
        running.cancel()
        return process

    monkeypatch.setattr(subprocess, "Popen", started)
    script = "sleep 300 & echo $! > bg.pid; echo $$ > sh.pid; wait"
    running = asyncio.ensure_future(commands.run(Root(tree.root), script, 10, True))
    with contextlib.suppress(asyncio.CancelledError):
        async with asyncio.timeout(30):  # generous: the call ends once its processes are dead
            await running
    pids = [int(file.read_text()) for file in files]
    assert await soon(lambda: not any(alive(pid) for pid in pids), timeout=30)
