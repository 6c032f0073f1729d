"""A host process for the crash trials (run as a script, never imported by pytest).

Usage: ``crash_host.py DATA_DIR SEED CHILDREN``

Builds a real host over ``DATA_DIR`` (every built-in plugin, the control and report plugins,
JSONL persistence with the default fsync policy). The first run creates the root session
``root`` and ``CHILDREN`` continuable children; later runs resume ``root`` and find the children
with ``list_children``. Every child's scripted model calls ``report`` at every step, so children
report and persist continuously; a child that settled is sent a followup (cold resume). The
parent SIGKILLs the process at a random moment.

Output, one flushed line each, printed only after the thing is acknowledged:
``ready <n>``; ``ack <child_id> <message_id> <output>`` (a report the parent's log accepted —
printed at the child's next model call, which follows the tool result, and not before
``ready``: a child may report while its siblings are still being created, and a run killed
before ``ready`` is not verified);
``followup <child_id> <message_id>`` (a message the child's log accepted).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import tool_subagent_report.plugin as report_plugin

from host.agents import ModelRequest, call, say
from host.sessions.model import SessionHeader
from host.subagents.errors import SubagentError
from host.subagents.types import ChildRequest
from host.testing import build_host
from tool_subagent_control import listing, root

ACCEPTED = "report accepted by the agent that started you as message "


def say_line(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


async def main() -> None:
    data_dir, seed, children = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    host = build_host(
        ("subagent_control", root),
        ("list_agents", listing),
        ("subagent_report", report_plugin),
        data_dir=data_dir,
    )
    services = host.services
    counter = [0]
    early: list[str] | None = []  # acks seen before ``ready``, printed right after it

    def say_ack(line: str) -> None:
        if early is None:
            say_line(line)
        else:
            early.append(line)

    def answer(request: ModelRequest) -> Any:
        if request.label is None or not request.label.startswith("w"):
            return say("ok")
        messages = request.messages
        if len(messages) >= 2 and messages[-1].role == "tool" and not messages[-1].is_error:
            text = messages[-1].content
            if text.startswith(ACCEPTED):
                output = messages[-2].tool_calls[0].arguments["output"]
                say_ack(f"ack {request.agent_id} {text[len(ACCEPTED) :]} {output}")
        counter[0] += 1
        return call("report", output=f"{request.label}:{seed}:{counter[0]}")

    services.models.resolve("scripted").answer_unscripted(answer)
    agents, subagents = services.agents, services.subagents
    if (data_dir / "root.jsonl").exists():
        parent = await agents.resume("root", label="root")
        ids = [e.id for e in await subagents.list_children("root")]
    else:
        parent = await agents.create(SessionHeader(id="root"), label="root")
        ids = []
        for index in range(children):
            started = await subagents.start_continuable(
                "spawn", ChildRequest(prompt="report"), parent=parent, label=f"w{index}"
            )
            ids.append(started.child_id)
    say_line(f"ready {len(ids)}")
    for line in early:
        say_line(line)
    early = None
    manager = subagents.manager()
    source = {"kind": "coordinator", "sender_session_id": "root"}
    while True:
        for child_id in ids:
            if manager.activation(child_id) is None:
                try:
                    message_id = await subagents.followup(
                        parent, child_id, "continue", source=source
                    )
                except SubagentError:
                    continue
                say_line(f"followup {child_id} {message_id}")
        await asyncio.sleep(0.005)


if __name__ == "__main__":
    asyncio.run(main())
