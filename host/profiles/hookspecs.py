"""The hook the profile library adds to the plugin system: ``register_profiles``.

The generic plugin system (``host.plugins``) knows nothing of profiles; the host adds this
spec to its pluggy manager (``add_hookspecs``) through ``profile_entry(library)``, the hook's
entry in the registration table (``host.hooks`` gives it its place, just before
``register_tools``). See docs/plugin-guide.md.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from host.plugins.hookspecs import hookspec
from host.plugins.registrations import HookEntry, Registrant, Staged

if TYPE_CHECKING:  # the author API (``host.api``) types the arguments; nothing at run time
    from host.api import ServiceContext
    from host.profiles.library import ProfileLibrary, RegisterProfile


@hookspec
def register_profiles(register: RegisterProfile, ctx: ServiceContext, config: Any) -> None:
    """Ship subagent profiles: call ``register(path)`` with a Markdown profile or a directory."""


def profile_entry(library: ProfileLibrary) -> HookEntry:
    """``register_profiles``' entry in the registration table: what a plugin registers goes to
    ``library``, named after the plugin (staged: the library's own check, added and taken back)."""

    def register_profile(registrant: Registrant, source: Any) -> None:
        registrant.scope.add(library.register(registrant.record.name, source))

    def check_profile(stage: Staged, source: Any) -> None:
        library.register(stage.record.name, source)()

    specs = sys.modules[__name__]
    return HookEntry("register_profiles", register_profile, check_profile, specs=specs)
