"""The host's own services, each a built-in default plugin named after the service it provides.

They load like any plugin (and can be blocked like any plugin); they are imported only when
not blocked.
"""

from __future__ import annotations

import importlib
from typing import Any

from host.plugins.discovery import PluginCandidate

# (plugin name, module) in the order the host loads them.
BUILTINS: tuple[tuple[str, str], ...] = (
    ("session_persistence", "host.builtins.session_persistence"),
    ("projections", "host.builtins.projections"),
    ("sessions", "host.builtins.sessions"),
    ("models", "host.builtins.models"),
    ("agents", "host.builtins.agents"),
    ("subagents", "host.builtins.subagents"),
    ("approvals", "host.builtins.approvals"),
)


def builtin_candidates() -> list[PluginCandidate]:
    """One candidate per built-in plugin; each imports its module only when loaded."""

    def loader(module: str) -> Any:
        return lambda: importlib.import_module(module)

    return [
        PluginCandidate(
            name=name,
            load=loader(module),
            entry_point=module,
            distribution="agent-host-core",
            version=_version(),
            builtin=True,
        )
        for name, module in BUILTINS
    ]


def _version() -> str:
    from host import __version__

    return __version__
