"""Built-in ``sessions``: the live session store.

It uses ``session_persistence`` and ``projections`` when they are present (both load before
it); without persistence, sessions live in memory only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from host.plugins.hookspecs import hookimpl
from host.services import Lazy

if TYPE_CHECKING:
    from host.api import RegisterService, ServiceContext

requires: tuple[str, ...] = ()
uses = ("session_persistence", "projections")


@hookimpl
def register_services(register: RegisterService, ctx: ServiceContext) -> None:
    """Provide the ``sessions`` store."""

    def build() -> Any:
        from host.sessions.store import SessionStore

        return SessionStore(ctx.find("session_persistence"), ctx.find("projections"))

    register("sessions", Lazy(build))
