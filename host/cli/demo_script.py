"""What each agent of the demo says: the scripted model's lines, phase by phase.

The coordinator (the root agent) and its subagents are scripted by label; answers that depend
on ids (send_message, interrupt_agent) are queued once the demo knows them. Anything no
script covers (reports and settlement notices reaching a parent) is acknowledged briefly.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import attrs

from host.agents.models import ModelRequest, ModelResponse
from host.agents.scripted import ScriptedModel, call, calls, say, tool_call
from host.sessions.model import ToolCall
from host.tools import Tool, ToolExec, ToolResult, tool

ROOT = "coordinator"
RESEARCH = "research changes"
PARSER = "dig into the parser"
DRAFT = "draft notes"
VERSION = "check version"
BENCHMARK = "run benchmark"
RELEASE = "release 1.4"
PUBLISH = "publish the notes"


def acknowledge(request: ModelRequest) -> ModelResponse:
    """The answer to whatever the script does not cover: notices and reports."""
    last = request.last_user_message()
    text = last.content if last else ""
    if text.startswith("Background subagent") and " reported:" in text:
        return say("Noted the report.")
    if text.startswith("Background subagent"):
        return say("Noted.")
    return say("Done.")


def subagent(description: str, prompt: str, **extra: object) -> ToolCall:
    """A call of the delegation tool."""
    return tool_call("subagent", description=description, prompt=prompt, **extra)


def script_first_phase(model: ScriptedModel) -> None:
    """The coordinator delegates; the children work, report and (one) delegate further."""
    model.answer_unscripted(acknowledge)
    model.script(
        ROOT,
        calls(
            subagent(RESEARCH, "List the user-visible changes since 1.3."),
            subagent(DRAFT, "Draft release notes for 1.4."),
            text="I'll split this up.",
        ),
        call(
            "subagent",
            description=VERSION,
            prompt="Which version is this?",
            run_in_background=False,
        ),
        say("Research and drafting run in the background; the version is 1.4.0."),
    )
    model.script(
        RESEARCH,
        call("subagent", description=PARSER, prompt="Check the parser for breaking changes."),
        call("report", output="Three user-visible changes so far; the parser is being checked."),
        say("Research done; the parser check reports on its own."),
    )
    model.script(
        PARSER,
        call("report", output="The parser has one breaking change: tabs are rejected."),
        say("Parser checked."),
    )
    model.script(DRAFT, call("report", output="Draft ready: five bullet points."), say("Drafted."))
    model.script(VERSION, say("1.4.0"))


def script_listing(model: ScriptedModel) -> None:
    """The coordinator looks at what it started."""
    model.script(
        ROOT,
        call("list_agents"),
        call("list_agents", scope="descendants"),
        say("Two background subagents; the researcher has a helper of its own."),
    )


def script_follow_up(model: ScriptedModel, drafter: str) -> None:
    """The coordinator sends the settled drafter more work (a cold resume)."""
    model.script(
        ROOT,
        call("send_message", subagent_id=drafter, message="Add a security section."),
        say("Asked the drafter for a security section."),
    )
    model.script(
        DRAFT, call("report", output="Added a security section."), say("Security section added.")
    )


def script_benchmark(model: ScriptedModel) -> None:
    """The coordinator starts a long-running child."""
    model.script(
        ROOT,
        call("subagent", description=BENCHMARK, prompt="Run the full benchmark suite."),
        say("The benchmark is running."),
    )
    model.script(BENCHMARK, call("long_task", what="the full benchmark suite"))


def script_interrupt(model: ScriptedModel, benchmark: str) -> None:
    """The coordinator stops the long-running child's turn."""
    model.script(ROOT, call("interrupt_agent", agent_id=benchmark), say("Stopped the benchmark."))


def script_after_restart(model: ScriptedModel, researcher: str) -> None:
    """A new host: the coordinator lists its (stored) children and resumes one."""
    model.answer_unscripted(acknowledge)
    model.script(
        ROOT,
        call("list_agents"),
        call("send_message", subagent_id=researcher, message="Summarize your findings."),
        say("Asked the researcher for a summary."),
    )
    model.script(RESEARCH, say("Three changes, one of them breaking (the parser)."))


def script_approval(model: ScriptedModel) -> None:
    """A grandchild calls a tool that needs the user's approval (the demo's user approves)."""
    model.script(
        ROOT,
        call("subagent", description=RELEASE, prompt="Ship 1.4.", run_in_background=False),
        say("Version 1.4 is released."),
    )
    model.script(
        RELEASE,
        call("subagent", description=PUBLISH, prompt="Publish them.", run_in_background=False),
        say("Released."),
    )
    model.script(PUBLISH, call("publish_notes", version="1.4.0"), say("Published."))


@attrs.frozen
class PublishArgs:
    """Arguments of the demo's ``publish_notes``."""

    version: str = attrs.field(metadata={"description": "The version whose notes to publish."})


def publish_tool(ran: Callable[[str], None]) -> Tool:
    """The demo's ``publish_notes``: needs the user's approval; ``ran`` hears that it ran."""

    @tool("publish_notes", "Publish the release notes.", PublishArgs, needs_approval=True)
    async def publish_notes(args: PublishArgs, exec: ToolExec) -> ToolResult:
        ran(f"publish_notes ran: the notes of {args.version} are published")
        return ToolResult(f"published the notes of {args.version}")

    return publish_notes


@attrs.frozen
class LongTaskArgs:
    """Arguments of the demo's ``long_task``."""

    what: str = attrs.field(metadata={"description": "What to work on."})


class LongTask:
    """A demo tool that works until its turn is interrupted; ``started`` is set on entry."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.tool = self._make()

    def _make(self) -> Tool:
        @tool("long_task", "Work on something that takes a long time.", LongTaskArgs)
        async def long_task(args: LongTaskArgs, exec: ToolExec) -> ToolResult:
            self.started.set()
            await exec.signal.wait()
            return ToolResult.error(f"{args.what} was interrupted")

        return long_task
