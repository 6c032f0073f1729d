"""The tool filter: which global tools an agent may see (``ToolView``), and what a child's
descriptor records of it (its JSON shape is this class's, each key written only when set).

Globs are ``host.tools.globs``: they match a tool's name or the plugin that registered it.
Any iterable of globs may be given; the filter keeps tuples, so it is hashable and compares
by value. A list left out (None) and an empty one filter alike except ``allow`` (None lets
every tool through, an empty list none), but each is kept as given: a descriptor records
what its child was started with.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from host.tools.globs import matches


def _strings(value: Iterable[str]) -> tuple[str, ...]:
    if isinstance(value, str):
        raise TypeError(f"a list of names or globs is expected, not the string {value!r}")
    return tuple(value)


def _globs(value: Iterable[str] | None) -> tuple[str, ...] | None:
    return None if value is None else _strings(value)


def _limits(value: Iterable[SubPluginLimit] | None) -> tuple[SubPluginLimit, ...] | None:
    return None if value is None else tuple(value)


def _glob_lists(value: Iterable[Iterable[str]] | None) -> tuple[tuple[str, ...], ...] | None:
    return None if value is None else tuple(_strings(globs) for globs in value)


@attrs.frozen
class SubPluginLimit:
    """Of the tools registered by sub-plugins of ``parent`` (``<parent>.<name>``), only those
    of the sub-plugins ``names`` pass (e.g. ``mcp`` and a profile's ``mcp_servers``)."""

    parent: str
    names: tuple[str, ...] = attrs.field(converter=_strings)


@attrs.frozen
class ToolFilter:
    """Which global tools an agent may see: those ``allow`` matches (None: all) and each of
    ``also_allow`` matches (a profile's tools within a deployment's), minus those ``deny``
    matches; and, of the tools registered by sub-plugins, only those ``sub_plugins`` admit
    (``SubPluginLimit``; other tools are not affected)."""

    allow: tuple[str, ...] | None = attrs.field(default=None, converter=_globs)
    deny: tuple[str, ...] | None = attrs.field(default=None, converter=_globs)
    sub_plugins: tuple[SubPluginLimit, ...] | None = attrs.field(default=None, converter=_limits)
    also_allow: tuple[tuple[str, ...], ...] | None = attrs.field(
        default=None, converter=_glob_lists
    )

    def admits(self, name: str, plugin: str | None = None) -> bool:
        """True if a global tool called ``name``, registered by ``plugin`` (None: not by a
        plugin, or unknown), passes the filter."""
        if self.allow is not None and not matches(self.allow, name, plugin):
            return False
        if not all(matches(globs, name, plugin) for globs in self.also_allow or ()):
            return False
        if self.deny and matches(self.deny, name, plugin):
            return False
        if plugin is not None:
            for limit in self.sub_plugins or ():
                prefix = limit.parent + "."
                inside = plugin.startswith(prefix)
                if inside and plugin[len(prefix) :].split(".")[0] not in limit.names:
                    return False
        return True
