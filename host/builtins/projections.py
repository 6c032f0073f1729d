"""Built-in ``projections``: the registry of projection units sessions fold on append."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from host.plugins.hookspecs import hookimpl
from host.services import Lazy

if TYPE_CHECKING:
    from host.api import RegisterService

requires: tuple[str, ...] = ()


def _build() -> Any:
    from host.sessions.projections import Projections

    return Projections()


@hookimpl
def register_services(register: RegisterService) -> None:
    """Provide an empty ``projections`` registry."""
    register("projections", Lazy(_build))
