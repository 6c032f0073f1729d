"""Discovery of installed plugin distributions through the ``agent_host.plugins`` entry points.

Installed distributions are scanned once per call; nothing is imported here. Each candidate
is loaded later, in its own try, so one broken distribution never stops the host.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import Any

import attrs

GROUP = "agent_host.plugins"


@attrs.frozen
class PluginCandidate:
    """A plugin the host may load: where it comes from and how to import it."""

    name: str
    load: Callable[[], Any]
    entry_point: str
    distribution: str | None = None
    version: str | None = None
    builtin: bool = False


def discover(group: str = GROUP) -> list[PluginCandidate]:
    """Every entry point of ``group`` installed on the path, sorted by name."""
    found = [_candidate(ep) for ep in entry_points(group=group)]
    return sorted(found, key=lambda c: c.name)


def _candidate(ep: EntryPoint) -> PluginCandidate:
    dist = ep.dist
    return PluginCandidate(
        name=ep.name,
        load=ep.load,
        entry_point=ep.value,
        distribution=dist.name if dist is not None else None,
        version=dist.version if dist is not None else None,
    )


def from_object(name: str, obj: Any, *, builtin: bool = False) -> PluginCandidate:
    """A candidate for a plugin object already in hand (built-ins, tests, the testing fixture)."""
    module = getattr(obj, "__name__", type(obj).__name__)
    return PluginCandidate(
        name=name,
        load=lambda: obj,
        entry_point=str(module),
        distribution="agent-host-core" if builtin else None,
        builtin=builtin,
    )
