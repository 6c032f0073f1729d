"""The delegation plugin (``subagent``): tools a parent uses to start children.

``[[plugins.subagent.tools]]`` lists tool instances (``name``, ``provider``, ``mode``), so one
deployment can offer e.g. ``subagent`` on ``spawn`` and ``subagent_fork`` on ``fork``. A tool
in ``continuable`` mode runs children in the background by default (``run_in_background``
may ask for the foreground); ``one-shot`` mode always runs them in the foreground. A tool is
not offered to agents at its provider's depth limit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import attrs

from host import hookimpl
from host.errors import HostError
from host.subagents.types import ChildRequest, RunResult
from host.tools import Tool, ToolExec, ToolResult, tool

if TYPE_CHECKING:
    from host.sessions.model import SessionHeader

requires = ("subagents",)

Mode = Literal["continuable", "one-shot"]

DESCRIPTION = (
    "Start a subagent: a separate agent with its own session that works on the task you "
    "describe. In the background (the default here) it returns at once with the subagent's "
    "id; you are told when it finishes, it may report to you meanwhile, and you can message "
    "it with send_message. In the foreground you wait for its final answer. Give it a short "
    "description and a complete, self-contained prompt."
)
FOREGROUND_DESCRIPTION = (
    "Start a subagent that works on the task you describe in its own session and wait for "
    "its final answer. Give it a short description and a complete, self-contained prompt."
)


@attrs.frozen
class ToolInstance:
    """One delegation tool: its name, the provider it starts children with, and its mode."""

    name: str = "subagent"
    provider: str = "spawn"
    mode: Mode = "continuable"


@attrs.frozen
class Config:
    """``[plugins.subagent]``: the delegation tools to offer."""

    tools: list[ToolInstance] = attrs.field(factory=lambda: [ToolInstance()])


@attrs.frozen
class SubagentArgs:
    """Arguments of a delegation tool."""

    description: str = attrs.field(
        metadata={"description": "A short label for the task (3-7 words), shown in listings."}
    )
    prompt: str = attrs.field(metadata={"description": "The complete task for the subagent."})
    run_in_background: bool | None = attrs.field(
        default=None,
        metadata={"description": "Run in the background (default) or wait for the answer."},
    )


def render_run(result: RunResult) -> ToolResult:
    """A foreground child's outcome: its answer, or why it stopped with what it had."""
    if result.stop_reason == "completed":
        structured = {"subagent_id": result.child_id, "stop_reason": "completed"}
        return ToolResult(result.text or "", structured=structured)
    text = f"subagent {result.child_id} stopped ({result.stop_reason}) before it finished"
    if result.text:
        text += f"\nPartial output:\n{result.text}"
    return ToolResult.error(text, structured={"subagent_id": result.child_id})


def make_tool(instance: ToolInstance, offered_to: Callable[[SessionHeader], bool]) -> Tool:
    """The delegation tool described by ``instance``."""
    description = DESCRIPTION if instance.mode == "continuable" else FOREGROUND_DESCRIPTION

    @tool(instance.name, description, SubagentArgs, offered_to=offered_to)
    async def delegate(args: SubagentArgs, exec: ToolExec) -> ToolResult:
        subagents = exec.ctx.subagents
        background = instance.mode == "continuable" and args.run_in_background is not False
        if args.run_in_background and instance.mode == "one-shot":
            return ToolResult.error(f"{instance.name} runs subagents in the foreground only")
        request = ChildRequest(prompt=args.prompt, label=args.description)
        try:
            if background:
                started = await subagents.start_continuable(
                    instance.provider,
                    request,
                    parent=exec.agent,
                    label=args.description,
                    signal=exec.signal,
                )
                return ToolResult(
                    f"started subagent {started.child_id}",
                    structured={"subagent_id": started.child_id},
                )
            run = await subagents.start(
                instance.provider, request, parent=exec.agent, signal=exec.signal
            )
        except HostError as error:
            return ToolResult.error(f"{instance.name} failed: {error.message}")
        return render_run(await run.result())

    return delegate


@hookimpl
def register_tools(register: Callable[[Tool], None], ctx: Any, config: Config) -> None:
    """Register one delegation tool per configured instance."""
    for instance in config.tools:

        def offered_to(header: SessionHeader, provider: str = instance.provider) -> bool:
            return bool(ctx.subagents.may_delegate(provider, header))

        register(make_tool(instance, offered_to))
