"""Built-in ``approvals``: the service that asks the root's user, and the ``ask_user`` tool.

The policy is ``[approvals]`` of ``agent-host.toml`` as the CLI reads it (user level narrowed
by the project; ``host.approvals.policy``), handed to this plugin as its configuration. The
service is built on first lookup, so a command that runs no tool never imports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from host.approvals.policy import PolicyTable
from host.plugins.hookspecs import hookimpl
from host.services import Lazy
from host.tools import ToolExec
from host.tools.tool import ToolResult, tool

if TYPE_CHECKING:
    from host.api import RegisterService, RegisterTool, ServiceContext

requires = ("agents",)

Config = PolicyTable


@hookimpl
def register_services(register: RegisterService, ctx: ServiceContext, config: Config) -> None:
    """Provide ``approvals`` with the configured policy."""

    def build() -> Any:
        from host.approvals.policy import Policy
        from host.approvals.service import ApprovalService
        from host.tools.globs import registered_by

        def plugin_of(name: str, tool: object) -> str | None:
            return registered_by(ctx.tools, name, tool)

        return ApprovalService(Policy.from_table(config), ctx.agents.get, plugin_of)

    register("approvals", Lazy(build))


EMPTY_QUESTION = "the question is empty: nobody was asked; write the whole question"
"""``ask_user``'s error for a blank question (asking the user nothing helps nobody)."""


@tool(needs_agent=True, name="ask_user")
async def ask_user(exec: ToolExec, question: str, choices: list[str] | None = None) -> ToolResult:
    """Ask the user a question and wait for the answer. Use it when you cannot go on without
    the user's decision or knowledge; offer choices when the answer is one of a few.

    Args:
        question: The question, complete on its own.
        choices: The answers to choose from, if the answer is one of a few.
    """
    from host.approvals.requests import question_result

    if not question.strip():
        return ToolResult.error(EMPTY_QUESTION)
    offered = tuple(choice for choice in choices or () if choice.strip())
    answer = await exec.ctx.get("approvals").ask_user(exec, question, offered or None)
    return question_result(answer)


@hookimpl
def register_tools(register: RegisterTool) -> None:
    """Offer ``ask_user`` to every agent."""
    register(ask_user)
