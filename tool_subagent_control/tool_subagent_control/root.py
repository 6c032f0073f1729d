"""The root plugin (``subagent_control``): ``send_message`` and ``interrupt_agent``.

It needs only the ``subagents`` service and registers both tools once, globally, however many
delegation tools a deployment offers. Both are thin adapters: authority, residency and cold
resume belong to the service; the tools pass the calling agent and render the outcome.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from host import hookimpl
from host.api import HostError, MessageSource
from host.tools import ToolExec, ToolResult, tool

if TYPE_CHECKING:
    from host.api import RegisterTool

requires = ("subagents",)

SEND_MESSAGE_DESCRIPTION = (
    "Send a message to one of your background subagents. The message becomes the subagent's "
    "next turn: if it is still working, the message waits until its current turn ends, so it "
    "cannot redirect work already under way. A settled subagent is resumed to handle it. "
    "This call returns no answer from the subagent: read its transcript by id, or wait for "
    "its report. A failed call means the message was not delivered."
)

INTERRUPT_AGENT_DESCRIPTION = (
    "Stop the current turn of a subagent you started, directly or further down. Only the "
    "current turn stops: messages already queued stay parked until a later send_message, its "
    "own descendants keep running, and it still accepts messages. The call returns once the "
    "stop is accepted, before the subagent has fully stopped. Interrupting a subagent that "
    "no longer exists or has settled is accepted and does nothing."
)


@attrs.frozen
class SendMessageArgs:
    """Arguments of ``send_message``."""

    subagent_id: str = attrs.field(metadata={"description": "The id of your direct subagent."})
    message: str = attrs.field(metadata={"description": "What the subagent should do next."})


@attrs.frozen
class InterruptAgentArgs:
    """Arguments of ``interrupt_agent``."""

    agent_id: str = attrs.field(
        metadata={"description": "The id of a subagent below you whose current turn to stop."}
    )


@tool("send_message", SEND_MESSAGE_DESCRIPTION, SendMessageArgs)
async def send_message(args: SendMessageArgs, exec: ToolExec) -> ToolResult:
    """Deliver ``message`` as the child's next FIFO turn, the caller being the exact parent."""
    parent = exec.agent
    source = MessageSource("coordinator", parent.id).as_dict()
    try:
        message_id = await exec.ctx.subagents.followup(
            parent, args.subagent_id, args.message, source=source, signal=exec.signal
        )
    except HostError as error:
        return ToolResult.error(f"message was not delivered: {error.message}")
    return ToolResult(
        f"message queued as the next turn for subagent {args.subagent_id}",
        structured={"message_id": message_id},
    )


@tool("interrupt_agent", INTERRUPT_AGENT_DESCRIPTION, InterruptAgentArgs)
async def interrupt_agent(args: InterruptAgentArgs, exec: ToolExec) -> ToolResult:
    """Ask the service to stop the target's current turn, the caller being the ancestor (a
    stored target waiting on the user: answered once its requests are recorded cancelled)."""
    try:
        exec.ctx.subagents.interrupt(args.agent_id, caller=exec.agent)
        await exec.ctx.subagents.cancel_waiting(args.agent_id, caller=exec.agent)
    except HostError as error:
        return ToolResult.error(error.message)
    return ToolResult(
        f"interrupt requested for agent {args.agent_id}", structured={"accepted": True}
    )


@hookimpl
def register_tools(register: RegisterTool) -> None:
    """Register ``send_message`` and ``interrupt_agent``."""
    register(send_message)
    register(interrupt_agent)
