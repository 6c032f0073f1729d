"""Tool globs: what ``deny = ["mcp.*"]``, a delegation tool's ``allow`` or a profile's ``tools``
name.

A glob is an ``fnmatch`` pattern (case-sensitive; a plain name is a glob matching itself). It
matches a tool when it matches the tool's name **or** the name of the plugin that registered
it, or of a plugin that one is a sub-plugin of: the MCP server ``git`` is the plugin
``mcp.git`` (a sub-plugin of ``mcp``) and registers ``git__status``, so ``git__status``,
``git__*``, ``mcp.git``, ``mcp.*`` and ``mcp`` all match that tool. A tool registered by no
plugin (an agent's own, a test's) is matched by its name only.

Every list of tool globs in the host goes through ``matches``; ``unmatched`` names the globs
that match no tool and no plugin at all (the start-up warnings).
"""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatchcase
from typing import Any

from host.naming import NamedRegistry, owning_plugin


def plugin_and_parents(plugin: str | None) -> list[str]:
    """``mcp.git`` → ``["mcp.git", "mcp"]``; None → ``[]``."""
    if not plugin:
        return []
    parts = plugin.split(".")
    return [".".join(parts[:end]) for end in range(len(parts), 0, -1)]


def matches(globs: Iterable[str], tool: str, plugin: str | None = None) -> bool:
    """Whether any of ``globs`` matches the tool ``tool`` registered by ``plugin`` (None: not
    by a plugin, or not known)."""
    names = [tool, *plugin_and_parents(plugin)]
    return any(fnmatchcase(name, glob) for glob in globs for name in names)


def unmatched(globs: Iterable[str], tools: Iterable[str], plugins: Iterable[str]) -> list[str]:
    """The globs that match none of the names ``tools`` and ``plugins``, in order (every
    plugin that registered a tool is among ``plugins``, so such a glob matches no tool)."""
    names = [*tools, *plugins]
    return [glob for glob in globs if not any(fnmatchcase(name, glob) for name in names)]


def registered_by(registry: NamedRegistry[Any], name: str, item: object = None) -> str | None:
    """The plugin that registered ``name`` in ``registry`` (the global tools); None when no
    plugin did, or when ``item`` is given and is not what is registered under ``name`` (an
    agent's own tool of the same name)."""
    if item is not None and registry.get(name) is not item:
        return None
    return owning_plugin(registry.owner(name))
