"""The terminal client while a line of the answer is still streaming, driven in a real
terminal (tmux) against the openai plugin's loopback server."""

from __future__ import annotations

import os
from pathlib import Path

from agent_host_openai.testing import Stream, completion, sse, stream_chunks

from tests.cli.support import AGENT_HOST
from tests.cli.tmux import Pane, require_tmux


def test_enter_while_a_line_streams_prints_that_line_once(tmp_path: Path, server) -> None:
    require_tmux()
    chunks = stream_chunks("Half a line and the rest.\nDone.", pieces=1)
    role, text, *ending = chunks
    half, rest = dict(text), dict(text)
    half["choices"] = [{**text["choices"][0], "delta": {"content": "Half a line"}}]
    rest["choices"] = [{**text["choices"][0], "delta": {"content": " and the rest.\nDone."}}]
    # the rest comes long after the half line: Enter is pressed while it is still arriving (the
    # pace is only before the rest: each HTTP chunk holds events, sent as ``sse`` writes them)
    first, last = sse(role) + sse(half), "".join(sse(chunk) for chunk in [rest, *ending])
    server.reply(Stream([first, last], pace=5.0), completion("Steered."))
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(
        AGENT_HOST_HOME=str(tmp_path / "home"),
        LANG="C.UTF-8",
        OPENAI_BASE_URL=server.url,
        AGENT_HOST_MODEL="m1",
    )
    command = [AGENT_HOST, "--data-dir", str(tmp_path / "data"), "chat"]
    pane = Pane(tmp_path, command, env, width=100)
    try:
        pane.wait_for("you>")
        pane.type("go")
        pane.wait_for("Half a line")
        pane.type("and hurry")
        pane.wait_for("Steered.")
        screen = pane.screen()
        assert screen.count("Half a line") == 1, screen
        assert "Half a line and the rest." in screen.splitlines()
        pane.keys("C-d")
        assert pane.exit_code() == 0
    finally:
        pane.close()
