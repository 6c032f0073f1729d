"""Built-in ``subagents``: the subagent service (``host.subagents.service.SubagentService``).

It requires and uses nothing: the service looks up ``agents``, ``sessions`` and
``projections`` once per call (``BoundServices``), so the ``SUBAGENT_CONTROL_*_UNAVAILABLE``
and ``CONTINUATION_UNAVAILABLE`` errors are reachable and a replaced provider restarts nothing
that holds resident children (docs/subagents.md, "What the service depends on"); it registers
the subagent identity projection unit with ``projections`` while that service is present.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from host.plugins.hookspecs import hookimpl
from host.services import Lazy

if TYPE_CHECKING:
    from host.api import RegisterService, Scope, ServiceContext

requires: tuple[str, ...] = ()


@hookimpl
def register_services(register: RegisterService, ctx: ServiceContext) -> None:
    """Provide ``subagents`` (built on first use)."""

    def build() -> Any:
        from host.subagents.service import SubagentService

        return SubagentService(ctx)

    register("subagents", Lazy(build))


@hookimpl
def activate(ctx: ServiceContext, scope: Scope) -> None:
    """On deactivation, unregister the identity unit the service registered (if built)."""

    def release() -> None:
        service = ctx.built("subagents")
        if service is not None:
            service.close()

    scope.add(release)
