"""Built-in ``projections``: the registry of projection units sessions fold on append."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from host.plugins.hookspecs import hookimpl
from host.services import Lazy

requires: tuple[str, ...] = ()


def _build() -> Any:
    from host.sessions.projections import Projections

    return Projections()


@hookimpl
def register_services(register: Callable[[str, Any], None]) -> None:
    """Provide an empty ``projections`` registry."""
    register("projections", Lazy(_build))
