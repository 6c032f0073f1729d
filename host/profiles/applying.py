"""What a profile gives an agent started from it: a child of the delegation tool, or a root
(``thread/start {profile}``, ``run``/``chat --profile``).

One way for both: the profile's own tool filter (``tools``, ``disallowed_tools`` and its
``mcp_servers`` limit), its memory, and the checks a start makes first (its model registered,
its MCP servers connected). A root also gets its persona, model and step limit here
(``root_options``); a child gets them through its ``ChildRequest`` and descriptor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from host.agents.registry import SetupStep
    from host.profiles.model import Profile
    from host.services import Lookup
    from host.subagents.descriptors import MemorySpec
    from host.tools.filter import ToolFilter

MCP_PLUGIN = "mcp"
"""The plugin whose sub-plugins ``mcp.<server>`` register the tools of MCP servers."""


def own_filter(profile: Profile) -> ToolFilter | None:
    """The profile's own filter over the global tools (None: it limits nothing)."""
    from host.tools.filter import SubPluginLimit, ToolFilter

    limits = None
    if profile.mcp_servers is not None:
        limits = [SubPluginLimit(MCP_PLUGIN, profile.mcp_servers)]
    if profile.tools is None and not profile.disallowed_tools and limits is None:
        return None
    deny = profile.disallowed_tools or None
    return ToolFilter(allow=profile.tools, deny=deny, sub_plugins=limits)


def memory_of(profile: Profile) -> MemorySpec | None:
    """The persistent memory an agent of ``profile`` keeps, if it has one."""
    if profile.memory is None or profile.memory_dir is None:
        return None
    from host.subagents.descriptors import MemorySpec

    return MemorySpec(profile.memory, profile.memory_dir)


def check_model(services: Lookup, profile: Profile) -> str | None:
    """Why ``profile``'s model cannot be used, or None (never a silent fallback)."""
    models = services.find("models")
    if profile.model is None or models is None or profile.model in models.names():
        return None
    known = ", ".join(models.names()) or "none"
    return (
        f'profile "{profile.name}" ({profile.origin}) names model "{profile.model}", '
        f"which is not registered (known: {known})"
    )


def check_servers(services: Lookup, profile: Profile) -> str | None:
    """Why an agent of ``profile`` cannot start for want of an MCP server, or None: every
    server its ``mcp_servers`` names must be an active plugin ``mcp.<server>`` (an agent
    never connects on its own; it uses the host's connections)."""
    if not profile.mcp_servers:
        return None
    plugins = services.find("plugins")
    for server in profile.mcp_servers:
        if plugins is None or not plugins.is_active(f"{MCP_PLUGIN}.{server}"):
            return f'required MCP server "{server}" is not connected'
    return None


def root_options(profile: Profile) -> tuple[ToolFilter | None, SetupStep, int]:
    """What a root started (or resumed) from ``profile`` is built with, as a child of it
    would be: its tool filter (None: it limits nothing), the setup step installing its
    persona and memory, and its step limit."""
    from host.agents.agent import DEFAULT_MAX_STEPS
    from host.subagents.children import composition_step

    steps = profile.max_steps if profile.max_steps is not None else DEFAULT_MAX_STEPS
    return (
        own_filter(profile),
        composition_step(profile.persona, memory_of(profile)),
        steps,
    )
