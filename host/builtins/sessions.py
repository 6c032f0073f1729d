"""Built-in ``sessions``: the live session store.

It uses ``session_persistence`` and ``projections`` when they are present (both load before
it); without persistence, sessions live in memory only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from host.plugins.hookspecs import hookimpl
from host.services import Lazy

requires: tuple[str, ...] = ()
uses = ("session_persistence", "projections")


@hookimpl
def register_services(register: Callable[[str, Any], None], ctx: Any) -> None:
    """Provide the ``sessions`` store."""

    def build() -> Any:
        from host.sessions.store import SessionStore

        return SessionStore(ctx.find("session_persistence"), ctx.find("projections"))

    register("sessions", Lazy(build))
