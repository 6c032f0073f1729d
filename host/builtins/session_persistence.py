"""Built-in ``session_persistence``: the embedded JSONL store under the data directory."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import attrs

from host.plugins.hookspecs import hookimpl
from host.services import Lazy

if TYPE_CHECKING:
    from host.api import RegisterService, ServiceContext

requires: tuple[str, ...] = ()


@attrs.frozen
class Config:
    """``[plugins.session_persistence]``: when appended events reach the disk."""

    fsync: Literal["never", "turn", "always"] = "turn"


@hookimpl
def register_services(register: RegisterService, ctx: ServiceContext, config: Config) -> None:
    """Provide ``session_persistence`` over ``<data_dir>/<id>.jsonl`` files."""

    def build() -> Any:
        from host.sessions.jsonl import JsonlPersistence

        return JsonlPersistence(ctx.settings.data_dir, fsync=config.fsync)

    register("session_persistence", Lazy(build))
