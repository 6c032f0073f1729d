"""Built-in ``projections``: the registry of projection units sessions fold on append."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from host.plugins.hookspecs import hookimpl
from host.sessions.projections import Projections

requires: tuple[str, ...] = ()


@hookimpl
def register_services(register: Callable[[str, Any], None]) -> None:
    """Provide an empty ``projections`` registry."""
    register("projections", Projections())
