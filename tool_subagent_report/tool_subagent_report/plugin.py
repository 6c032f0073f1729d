"""The report plugin (``subagent_report``): ``report`` for continuable children only.

On activation it registers one continuable setup contribution and nothing global. The
contribution installs, into each continuable in-process child as it is built (fresh or cold
resumed), a child-scoped guidance section and then the scope-local ``report`` tool, so a
delegation allow-list cannot remove it. Removing the plugin revokes both from every resident
child at once; the plugin activated again reaches a resident child only at its next child
activation (once released, when it is resumed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

import host.api as api
from host import hookimpl
from host.api import (
    Disposer,
    HostError,
    Owner,
    ReportDelivery,
    Scope,
    dispose_errors,
    roll_back,
)
from host.tools import Tool, ToolExec, ToolResult, tool

if TYPE_CHECKING:
    from host.api import AgentSetup, Contribution, PluginHandle, ServiceContext

requires = ("subagents",)

MAX_OUTPUT_CHARS = 100_000

REPORT_DESCRIPTION = (
    "Send selected content to the agent that started you (your direct parent, no one else). "
    "Deliver your result with report before you finish; report earlier when a finding changes "
    "what your parent should do next. You may call it more than once. Reporting never ends "
    "your turn. A failed call may still have arrived, so do not blindly repeat it."
)

GUIDANCE = (
    "You are a background subagent. Deliver your result to the agent that started you with "
    "the report tool before you finish: finishing your turn does not send anything by itself. "
    "Report earlier too when a finding changes what that agent should do next. Reporting "
    "never ends your turn."
)


@attrs.frozen
class Config:
    """``[plugins.subagent_report]``: whether a report wakes the parent, and the size limit.

    ``delivery`` is ``"next-step"`` (default: wakes an idle parent, joins a running one at its
    next step) or ``"quiet"`` (visible at the parent's next step, never wakes it).
    ``max_output_chars`` (default ``MAX_OUTPUT_CHARS``, at least 1) is the longest ``output`` a
    report may carry; a longer one is refused with a clear error and nothing is delivered.
    """

    delivery: ReportDelivery = "next-step"
    max_output_chars: int = attrs.field(default=MAX_OUTPUT_CHARS, validator=attrs.validators.ge(1))


@attrs.frozen
class ReportArgs:
    """Arguments of ``report``."""

    output: str = attrs.field(metadata={"description": "The content your parent should receive."})


def make_report_tool(config: Config) -> Tool:
    """The ``report`` tool, delivering with the deployment's policy (never the model's)."""

    @tool("report", REPORT_DESCRIPTION, ReportArgs)
    async def report(args: ReportArgs, exec: ToolExec) -> ToolResult:
        if len(args.output) > config.max_output_chars:
            return ToolResult.error(
                f"report output is {len(args.output)} characters, more than the limit of "
                f"{config.max_output_chars}; report was not delivered"
            )
        try:
            message_id = await exec.ctx.subagents.report_from(
                exec.agent, args.output, delivery=config.delivery, signal=exec.signal
            )
        except HostError as error:
            return ToolResult.error(error.message)
        return ToolResult(
            f"report accepted by the agent that started you as message {message_id}",
            structured={"message_id": message_id},
        )

    return report


def make_contribution(config: Config, owner: Owner) -> Contribution:
    """The setup contribution: install section then tool (both owned by ``owner``, this
    plugin); undo tool then section."""
    report = make_report_tool(config)

    def contribute(setup: AgentSetup) -> Disposer:
        installed: list[Disposer] = []
        # read with the first child, not at activation (host.api keeps it from then on)
        section = api.PromptSection("subagent_report", GUIDANCE, order=50)
        installed.append(setup.sections.register(section.name, section, owner=owner))
        try:
            installed.append(setup.tools.register(report.name, report, owner=owner))
        except Exception as error:
            roll_back(
                error, lambda: dispose_errors(installed), "installing report failed", chain=False
            )
            raise
        scope = Scope("report in a subagent")
        for disposer in installed:
            scope.add(disposer)
        return scope.dispose

    return contribute


@hookimpl
def activate(ctx: ServiceContext, scope: Scope, config: Config, plugin: PluginHandle) -> None:
    """Register the contribution; the plugin's scope revokes it on deactivation."""
    contribution = make_contribution(config, Owner(plugin.name))
    scope.add(ctx.subagents.register_continuable_setup(contribution))
