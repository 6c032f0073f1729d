"""End to end: ``agent-host dev`` in a subprocess prints the reload line after a file edit.

The plugin is a throwaway distribution on ``PYTHONPATH`` (a checkout, so "in development").
The file watcher is in place before the prompt shows, so the test saves once, the moment the
prompt appears; it asserts no latency (that is bench/reload.py's job).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from host.cli.chat import PROMPT
from tests.distributions import write_distribution
from tests.lines import Lines, wait_for
from tests.reload.support import tools_source

TIMEOUT = 60.0


def start_dev(tmp_path: Path, *options: str) -> tuple[Lines, Path]:
    """``agent-host dev`` over a throwaway ``devloop`` plugin whose ``ping`` says ``pong 0``;
    returns the running command and the plugin's module file."""
    site = tmp_path / "site"
    module = f"devloop_{os.getpid()}"
    write_distribution(
        site,
        "devloop-plugin",
        entry_points={"devloop": module},
        modules={module: tools_source({"ping": "pong 0"})},
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_HOST_", "OPENAI_"))}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    data = str(tmp_path / "d")
    command = [sys.executable, "-m", "host.cli.main", "dev", "--data-dir", data, *options]
    return Lines(command, cwd=tmp_path, env=env, prompt=PROMPT), site / f"{module}.py"


def test_a_save_made_as_the_prompt_appears_is_reloaded(tmp_path: Path) -> None:
    dev, source = start_dev(tmp_path)
    try:
        assert wait_for(dev.out, PROMPT, TIMEOUT) is not None
        source.write_text(tools_source({"ping": "pong 1"}))
        line = wait_for(dev.out, "reloaded devloop in ", TIMEOUT)
        assert line is not None and line.endswith(" ms")
        watching = wait_for(dev.err, "agent-host: watching", TIMEOUT)
        assert watching is not None and "devloop" in watching
        dev.send("/exit\n")
        assert dev.process.wait(timeout=TIMEOUT) == 0
    finally:
        dev.kill()


def test_a_script_drives_the_tool_before_and_after_a_reload(tmp_path: Path) -> None:
    ping = {"tool_calls": [{"name": "ping", "arguments": {}}]}
    script = tmp_path / "script.json"
    script.write_text(json.dumps([ping, "first", ping, "second"]))
    dev, source = start_dev(tmp_path, "--script", str(script))
    try:
        assert wait_for(dev.out, PROMPT, TIMEOUT) is not None
        dev.send("ping it\n")
        assert wait_for(dev.out, "first", TIMEOUT) is not None
        source.write_text(tools_source({"ping": "pong 1"}))
        assert wait_for(dev.out, "reloaded devloop in ", TIMEOUT) is not None
        dev.send("again\n")
        assert wait_for(dev.out, "second", TIMEOUT) is not None
        dev.send("/exit\n")
        assert dev.process.wait(timeout=TIMEOUT) == 0
    finally:
        dev.kill()
    (log,) = (tmp_path / "d").glob("*.jsonl")
    results = [
        event["content"]
        for event in map(json.loads, log.read_text().splitlines())
        if event.get("role") == "tool"
    ]
    assert results == ["pong 0", "pong 1"]
