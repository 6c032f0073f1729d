"""Built-in ``agents``: the registry of live agents, built over ``sessions`` and ``models``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from host.agents.registry import AgentRegistry
from host.plugins.hookspecs import hookimpl

requires = ("sessions", "models")


@hookimpl
def register_services(register: Callable[[str, Any], None], ctx: Any) -> None:
    """Provide ``agents``; its agents see the global tools and prompt sections."""
    register("agents", AgentRegistry(ctx.sessions, ctx.models, ctx.tools, ctx.prompt_sections, ctx))
