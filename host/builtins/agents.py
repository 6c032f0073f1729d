"""Built-in ``agents``: the registry of live agents, built over ``sessions`` and ``models``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from host.plugins.hookspecs import hookimpl
from host.services import Lazy

if TYPE_CHECKING:
    from host.api import RegisterService, ServiceContext

requires = ("sessions", "models")


@hookimpl
def register_services(register: RegisterService, ctx: ServiceContext) -> None:
    """Provide ``agents``; its agents see the global tools and prompt sections."""

    def build() -> Any:
        from host.agents.registry import AgentRegistry

        return AgentRegistry(ctx.sessions, ctx.models, ctx.tools, ctx.prompt_sections, ctx)

    register("agents", Lazy(build))
