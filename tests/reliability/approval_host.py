"""A host process for the approval crash trials (run as a script, never imported by pytest).

Usage: ``approval_host.py DATA_DIR MARKS MODE``

A real host over ``DATA_DIR`` (every built-in plugin, the control and report plugins, JSONL
persistence with the default fsync policy) and a tool ``append`` that needs approval and
appends its line to the file ``MARKS`` (flushed and synced) each time it runs.

The first run creates the root ``root`` and a continuable child ``asker`` whose model calls
``append``; with nobody to ask, the request waits. Later runs resume ``root``, answer every
request as ``MODE`` says and send the child a followup (its cold resume, which asks a request
left pending again), wait for it to settle and exit. Modes: ``hold`` — the request is asked and
never answered; ``approve`` — approved; ``hang`` — approved, and the tool hangs after it
appended its line (a kill then lands after the decision, before the result); ``deny`` — denied.

Output, one flushed line each, printed only after the thing is recorded:
``pending <request_id>`` (first run: the request is in both logs); ``ready``; ``asked
<request_id>`` (the front end is asked); ``ran`` (the line is in ``MARKS``); ``result <text>``
(the child settled; the text of its call's tool result).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import tool_subagent_report.plugin as report_plugin

from host.agents import ModelRequest, call, say
from host.approvals.requests import Answer, ApprovalRequest
from host.sessions.model import MessageEvent, SessionHeader
from host.subagents.types import ChildRequest
from host.testing import build_host
from host.tools import tool
from tool_subagent_control import listing, root


def say_line(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


async def forever() -> None:
    await asyncio.Event().wait()


def make_append(marks: Path, mode: str) -> Any:
    @tool(needs_approval=True)
    async def append(line: str) -> str:
        """Append a line to the marks file."""
        with marks.open("a") as file:
            file.write(line + "\n")
            file.flush()
            os.fsync(file.fileno())
        say_line("ran")
        if mode == "hang":
            await forever()
        return f"appended {line}"

    return append


def make_handler(mode: str) -> Any:
    async def handler(request: ApprovalRequest) -> Answer:
        say_line(f"asked {request.request_id}")
        if mode == "hold":
            await forever()
        return Answer.deny("not now") if mode == "deny" else Answer.approve()

    return handler


async def main() -> None:
    data_dir, marks, mode = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    host = build_host(
        ("subagent_control", root),
        ("list_agents", listing),
        ("subagent_report", report_plugin),
        data_dir=data_dir,
    )
    host.tools.register("append", make_append(marks, mode), owner="trial")
    services = host.services
    first = not (data_dir / "root.jsonl").exists()

    def answer(request: ModelRequest) -> Any:
        if first and request.label == "asker":
            return call("append", line="one")
        return say("finished")

    services.models.resolve("scripted").answer_unscripted(answer)
    agents, subagents, approvals = services.agents, services.subagents, services.approvals
    if first:
        parent = await agents.create(SessionHeader(id="root"), label="root")
        await subagents.start_continuable(
            "spawn", ChildRequest(prompt="append"), parent=parent, label="asker"
        )
        while not approvals.pending():
            await asyncio.sleep(0.005)
        say_line(f"pending {approvals.pending()[0].request_id}")
        await forever()
    approvals.on_request(make_handler(mode))
    parent = await agents.resume("root", label="root")
    say_line("ready")
    (child,) = await subagents.list_children("root")
    await subagents.followup(parent, child.id, "continue", source={"kind": "trial"})
    activation = subagents.manager().activation(child.id)
    if activation is not None:
        await activation.wait_done()
    stored = await services.session_persistence.inspect(child.id)
    results = [
        e.body.content
        for e in stored.events
        if isinstance(e.body, MessageEvent) and e.body.role == "tool"
    ]
    say_line(f"result {' | '.join(results)}")
    await host.aclose()


if __name__ == "__main__":
    asyncio.run(main())
