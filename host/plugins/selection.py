"""Which plugins may load: the allow-list of installed plugins and the block-list of any plugin.

``AGENT_HOST_PLUGINS=a,b`` allows only those installed plugins (empty: none; unset: all);
built-in plugins always load unless blocked. ``AGENT_HOST_DISABLE_PLUGINS=a,b`` and
``--no-plugin NAME`` block any plugin. Names that match no plugin produce warnings.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

import attrs


def _names(value: str) -> frozenset[str]:
    return frozenset(part.strip() for part in value.split(",") if part.strip())


BLOCKED_BY_SELECTION = "blocked by selection"
"""The error of a plugin blocked by ``--no-plugin`` / ``AGENT_HOST_DISABLE_PLUGINS``."""


@attrs.frozen
class Selection:
    """An allow-list (None: every installed plugin) and a block-list."""

    allow: frozenset[str] | None = None
    block: frozenset[str] = frozenset()

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, no_plugin: Iterable[str] = ()
    ) -> Selection:
        """Read ``AGENT_HOST_PLUGINS`` / ``AGENT_HOST_DISABLE_PLUGINS`` plus CLI blocks."""
        env = os.environ if environ is None else environ
        allow = env.get("AGENT_HOST_PLUGINS")
        block = _names(env.get("AGENT_HOST_DISABLE_PLUGINS", "")) | frozenset(no_plugin)
        return cls(allow=None if allow is None else _names(allow), block=block)

    def blocked_reason(self, name: str, *, builtin: bool) -> str | None:
        """Why ``name`` may not load, or None when it may."""
        if name in self.block:
            return BLOCKED_BY_SELECTION
        if not builtin and self.allow is not None and name not in self.allow:
            return "not in AGENT_HOST_PLUGINS"
        return None

    def unknown_names(self, known: Iterable[str]) -> list[str]:
        """One warning per selected name that matches no plugin."""
        known_set = set(known)
        warnings = [
            f'unknown plugin "{name}" in AGENT_HOST_PLUGINS'
            for name in sorted(self.allow or ())
            if name not in known_set
        ]
        warnings += [
            f'unknown plugin "{name}" blocked'
            for name in sorted(self.block)
            if name not in known_set
        ]
        return warnings
