"""Built-in ``models``: the model registry, with the keyless scripted model as ``scripted``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from host.plugins.hookspecs import hookimpl
from host.services import Lazy

if TYPE_CHECKING:
    from host.api import RegisterService

requires: tuple[str, ...] = ()


@attrs.frozen
class Config:
    """``[plugins.models]``: which registered model agents use by default.

    Unset: the first model a plugin registers (e.g. a configured ``openai``), else the keyless
    ``scripted`` model.
    """

    default: str | None = None


@hookimpl
def register_services(register: RegisterService, config: Config) -> None:
    """Provide ``models`` with the scripted model registered."""

    def build() -> Any:
        from host.agents.models import ModelRegistry
        from host.agents.scripted import ScriptedModel

        registry = ModelRegistry(default=config.default, fallback="scripted")
        registry.register("scripted", ScriptedModel)
        return registry

    register("models", Lazy(build))
