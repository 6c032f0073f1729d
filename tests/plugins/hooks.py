"""Every hook a plugin of the host may implement: the plugin system's own
(``host.plugins.hookspecs``) and those the host adds to it (entries of the registration table
with their own spec, e.g. ``register_profiles`` from ``host.profiles.hookspecs``), read from a
host as built."""

from __future__ import annotations

from typing import Any

from host.app import Host
from host.plugins import hookspecs

_HOST = Host()
SPEC_MODULES: tuple[Any, ...] = (
    hookspecs,
    *(entry.specs for entry in _HOST.plugins.table.values() if entry.specs is not None),
)
ACTIVATION_ORDER: tuple[str, ...] = _HOST.plugins.activation_order
"""The hooks a host calls on activation, in order."""
SPECS: dict[str, Any] = {
    name: value
    for module in SPEC_MODULES
    for name, value in vars(module).items()
    if callable(value) and hasattr(value, f"{hookspecs.PROJECT}_spec")
}
"""Every hook's ``@hookspec`` function, by name."""
HOOKS = sorted(SPECS)
_HOST.close()
