"""The hook the profile library adds to the plugin system: ``register_profiles``.

The generic plugin system (``host.plugins``) knows nothing of profiles; the host adds this
spec to its pluggy manager (``add_hookspecs``) with ``profile_hook(library)``, which also gives
the hook its place in the activation order (just before ``register_tools``) and its
``register`` callback. See docs/plugin-guide.md.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from host.plugins.hookspecs import hookspec
from host.plugins.registrars import AddedHook

if TYPE_CHECKING:  # the author API (``host.api``) types the arguments; nothing at run time
    from host.api import ServiceContext
    from host.disposal import Scope
    from host.profiles.library import ProfileLibrary, RegisterProfile


@hookspec
def register_profiles(register: RegisterProfile, ctx: ServiceContext, config: Any) -> None:
    """Ship subagent profiles: call ``register(path)`` with a Markdown profile or a directory."""


def profile_hook(library: ProfileLibrary) -> AddedHook:
    """``register_profiles``, adding to ``library`` what a plugin registers (named after it)."""

    def registrar(plugin: str, scope: Scope) -> Callable[[Any], None]:
        def register_profile(source: Any) -> None:
            scope.add(library.register(plugin, source))

        return register_profile

    def check(plugin: str) -> Callable[[Any], None]:
        def check_profile(source: Any) -> None:  # the library's own check: added, taken back
            library.register(plugin, source)()

        return check_profile

    return AddedHook(
        "register_profiles",
        specs=sys.modules[__name__],
        before="register_tools",
        registrar=registrar,
        check=check,
    )
