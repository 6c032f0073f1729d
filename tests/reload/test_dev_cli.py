"""End to end: ``agent-host dev`` in a subprocess prints the reload line after a file edit.

The plugin is a throwaway distribution on ``PYTHONPATH`` (a checkout, so "in development").
The file watcher is in place before the prompt shows, so the test saves once, the moment the
prompt appears; it asserts no latency (that is bench/reload.py's job).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from host.cli.dev import PROMPT
from tests.distributions import write_distribution
from tests.lines import Lines, wait_for
from tests.reload.support import tools_source

TIMEOUT = 60.0


def test_a_save_made_as_the_prompt_appears_is_reloaded(tmp_path: Path) -> None:
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
    command = [sys.executable, "-m", "host.cli.main", "dev", "--data-dir", str(tmp_path / "d")]
    dev = Lines(command, cwd=tmp_path, env=env, prompt=PROMPT)
    try:
        assert wait_for(dev.out, PROMPT, TIMEOUT) is not None
        (site / f"{module}.py").write_text(tools_source({"ping": "pong 1"}))
        line = wait_for(dev.out, "reloaded devloop in ", TIMEOUT)
        assert line is not None and line.endswith(" ms")
        watching = wait_for(dev.err, "agent-host: watching", TIMEOUT)
        assert watching is not None and "devloop" in watching
        dev.send("/exit\n")
        assert dev.process.wait(timeout=TIMEOUT) == 0
    finally:
        dev.kill()
