"""The delegation plugin (``subagent``): tools a parent uses to start children.

``[[plugins.subagent.tools]]`` lists tool instances (``name``, ``provider``, ``mode``), so one
deployment can offer e.g. ``subagent`` on ``spawn`` and ``subagent_fork`` on ``fork``. A tool
in ``continuable`` mode runs children in the background by default (``run_in_background``
may ask for the foreground); ``one-shot`` mode always runs them in the foreground. A tool is
not offered to agents at its provider's depth limit.

Profiles (``host.profiles``, docs/profiles.md): the optional ``subagent_type`` argument names a
profile, whose persona, tool filter, model, step limit, memory and ``background`` default the
child gets; omitted, it is ``general-purpose`` when that profile is in effect (a plain child
with the parent's tools only when it is not, e.g. without the ``profiles`` service). The tool's
description lists the profiles in effect with their descriptions (the same text for the same
set of profiles; the schema never changes). Profiles are re-read at every start. A tool
instance's ``allow``/``deny`` is the deployment's filter: every child started through it is cut
down to it, whatever its profile says, and project-level profiles naming tools outside it are
refused (the repository cannot grant itself more). A profile's ``mcp_servers`` limits the
child's MCP tools (those registered by the sub-plugins ``mcp.<server>``) to the servers named;
each must be active when the child starts, or nothing is started.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

import host.api as api
from host import hookimpl
from host.api import ChildMode, HostError
from host.tools import Tool, ToolExec, ToolResult, tool

# The subagent and profile values are read as ``api.<name>`` where they are used, not at load:
# host.api imports each on first use and keeps it (a ``from host.api import`` inside a function
# would run the import system again at every call).
if TYPE_CHECKING:
    from host.api import (
        ChildRequest,
        Profile,
        ProfileError,
        ProfileSet,
        RegisterTool,
        RunResult,
        ServiceContext,
        SessionHeader,
        ToolFilter,
    )

requires = ("subagents",)

REPORT_PLUGIN = "subagent_report"
"""The plugin that gives every continuable child its ``report`` tool; a built-in persona's
closing names ``report`` only while it is active (``Profile.persona_for``)."""

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
    """One delegation tool: its name, the provider it starts children with, its mode, and the
    deployment's filter over the tools its children may have: tool globs, matching a tool's
    name or its plugin's (``host.tools.globs``; ``allow`` None: every tool)."""

    name: str = "subagent"
    provider: str = "spawn"
    mode: ChildMode = "continuable"
    allow: list[str] | None = None
    deny: list[str] = attrs.field(factory=list)

    def deployment_filter(self) -> ToolFilter | None:
        """The filter every child of this tool is cut down to (None: no restriction)."""
        if self.allow is None and not self.deny:
            return None
        return api.ToolFilter(allow=self.allow, deny=self.deny or None)


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
    subagent_type: str | None = attrs.field(
        default=None,
        metadata={
            "description": "The profile to start the subagent from, one of those listed in "
            "the tool description; omit it for general-purpose (a plain subagent with your tools "
            "if there is no such profile)."
        },
    )


def render_run(result: RunResult, profile: Profile | None = None) -> ToolResult:
    """A foreground child's outcome: its answer, or why it stopped with what it had."""
    if result.stop_reason == "completed":
        structured: dict[str, Any] = {"subagent_id": result.child_id, "stop_reason": "completed"}
        if profile is not None:
            structured["subagent_type"] = profile.name
        return ToolResult(result.text or "", structured=structured)
    text = f"subagent {result.child_id} stopped ({result.stop_reason}) before it finished"
    if result.text:
        text += f"\nPartial output:\n{result.text}"
    return ToolResult.error(text, structured={"subagent_id": result.child_id})


PROFILES_INTRO = (
    "Profiles (subagent_type) give the subagent a role, its own instructions and a set of tools:"
)


def describe(base: str, profiles: ProfileSet) -> str:
    """The tool description: ``base``, then each profile with its description (and tools)."""
    if not profiles.profiles:
        return base
    lines = [base, "", PROFILES_INTRO]
    for profile in profiles.profiles:
        name = profile.name
        aliases = profiles.aliases_of(name)
        if aliases:
            name += f" (or {', '.join(aliases)})"
        line = f"- {name}: {profile.description}"
        if profile.tools is not None:
            line += f" (tools: {', '.join(profile.tools) or 'none'})"
        if profile.mcp_servers is not None:
            line += f" (MCP servers: {', '.join(profile.mcp_servers) or 'none'})"
        lines.append(line)
    return "\n".join(lines)


def describe_in_effect(base: str, ctx: ServiceContext, deployment: ToolFilter | None) -> str:
    """``base`` with the profiles in effect now (the delegation tool's live description)."""
    return describe(base, load_profiles(ctx, deployment))


def load_profiles(ctx: ServiceContext, deployment: ToolFilter | None) -> ProfileSet:
    """The profiles in effect for a tool with ``deployment``'s filter (none without the
    ``profiles`` service)."""
    library = ctx.find("profiles")
    if library is None:
        return api.ProfileSet()
    loaded: ProfileSet = library.load(deployment)
    return loaded


def child_request(
    args: SubagentArgs,
    profile: Profile | None,
    deployment: ToolFilter | None,
    continuable: bool = False,
    reporting: bool = False,
) -> ChildRequest:
    """What to ask the subagent service for: the task, plus the profile cut to ``deployment``
    (its persona as a child of that mode, with ``report`` or not, gets it:
    ``Profile.persona_for``)."""
    if profile is None:
        return api.ChildRequest(prompt=args.prompt, label=args.description, tool_filter=deployment)
    return api.ChildRequest(
        prompt=args.prompt,
        label=args.description,
        model=profile.model,
        persona=profile.persona_for(continuable, reporting),
        tool_filter=api.combine_filters(deployment, api.own_filter(profile)),
        max_steps=profile.max_steps,
        profile=profile.name,
        mcp_servers=list(profile.mcp_servers) if profile.mcp_servers is not None else None,
        memory=api.memory_of(profile),
    )


def make_tool(
    instance: ToolInstance,
    offered_to: Callable[[SessionHeader], bool],
    ctx: ServiceContext | None = None,
) -> Tool:
    """The delegation tool described by ``instance`` (with ``ctx``: its description lists the
    profiles in effect whenever it is read, re-read from their files (cached on file metadata),
    so the model always sees the set a start would use)."""
    base = DESCRIPTION if instance.mode == "continuable" else FOREGROUND_DESCRIPTION
    deployment = instance.deployment_filter()
    description: str | Callable[[], str] = base
    if ctx is not None:
        description = functools.partial(describe_in_effect, base, ctx, deployment)

    @tool(instance.name, description, SubagentArgs, offered_to=offered_to)
    async def delegate(args: SubagentArgs, exec: ToolExec) -> ToolResult:
        loaded = load_profiles(exec.ctx, deployment)  # once: the default and the lookup agree
        profile = chosen_profile(instance.name, exec.ctx, loaded, args.subagent_type)
        if isinstance(profile, ToolResult):
            return profile
        return await start_child(instance, args, exec, profile, deployment)

    return delegate


def chosen_profile(
    tool_name: str, ctx: ServiceContext, loaded: ProfileSet, name: str | None
) -> Profile | ToolResult | None:
    """The profile ``name`` asks for among ``loaded`` (None: the default profile, if it is in
    effect), ready to start from, or the error result the model gets instead."""
    if name is None:
        profile = loaded.default()
        if profile is None:
            return None
    else:
        try:
            profile = api.resolve(name, loaded)
        except api.ProfileError as error:
            return unresolved(tool_name, loaded, error)
    problem = api.check_model(ctx, profile)
    if problem is not None:
        return ToolResult.error(f"{tool_name} failed: {problem}")
    missing = api.check_servers(ctx, profile)
    if missing is not None:
        return ToolResult.error(missing)
    return profile


def unresolved(tool_name: str, loaded: ProfileSet, error: ProfileError) -> ToolResult:
    """The error result of a ``subagent_type`` that names no profile of ``loaded`` (or
    several), with the profile files skipped when it names none."""
    text = f"{tool_name} failed: {error.message}"
    problems = [d for d in loaded.diagnostics if d.skipped]
    if error.code == "UNKNOWN_PROFILE" and problems:
        skipped = "; ".join(str(d) for d in problems[:3])
        more = len(problems) - 3
        text += f"\nSkipped profile files: {skipped}" + (f" (and {more} more)" if more > 0 else "")
    return ToolResult.error(text)


async def start_child(
    instance: ToolInstance,
    args: SubagentArgs,
    exec: ToolExec,
    profile: Profile | None,
    deployment: ToolFilter | None,
) -> ToolResult:
    """Start the child: in the background (continuable) unless asked or configured not to,
    else in the foreground, returning its final answer."""
    if args.run_in_background and instance.mode == "one-shot":
        return ToolResult.error(f"{instance.name} runs subagents in the foreground only")
    wanted = args.run_in_background
    if wanted is None and profile is not None:
        wanted = profile.background
    background = instance.mode == "continuable" and wanted is not False
    reporting = background and exec.ctx.plugins.is_active(REPORT_PLUGIN)
    request = attrs.evolve(
        child_request(args, profile, deployment, background, reporting),
        parent_tool_call_id=exec.tool_call_id or None,
    )
    subagents = exec.ctx.subagents
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
                structured=started_data(started.child_id, profile),
            )
        run = await subagents.start(
            instance.provider, request, parent=exec.agent, signal=exec.signal
        )
    except HostError as error:
        return ToolResult.error(f"{instance.name} failed: {error.message}")
    return render_run(await run.result(), profile)


def started_data(child_id: str, profile: Profile | None) -> dict[str, Any]:
    """The structured result of a background start."""
    data: dict[str, Any] = {"subagent_id": child_id}
    if profile is not None:
        data["subagent_type"] = profile.name
    return data


@hookimpl
def register_tools(register: RegisterTool, ctx: ServiceContext, config: Config) -> None:
    """Register one delegation tool per configured instance."""
    for instance in config.tools:

        def offered_to(header: SessionHeader, provider: str = instance.provider) -> bool:
            return bool(ctx.subagents.may_delegate(provider, header))

        register(make_tool(instance, offered_to, ctx))
