"""Tool globs: what ``deny = ["mcp.*"]``, a delegation tool's ``allow`` or a profile's ``tools``
name.

A glob is an ``fnmatch`` pattern (case-sensitive; a plain name is a glob matching itself). It
matches a tool when it matches the tool's name **or** the name of the plugin that registered
it, and nothing else: the MCP server ``git`` is the plugin ``mcp.git`` and registers
``git__status``, so ``git__status``, ``git__*``, ``mcp.git`` and ``mcp.*`` match that tool;
``mcp`` (the plugin that runs the servers, which registers no tool itself) does not, nor does
``git``. A tool registered by no plugin (an agent's own, a test's) is matched by its name only.

Every list of tool globs in the host goes through ``matches``; ``unmatched`` names the globs
that match no tool (the start-up warnings).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase
from typing import Any

from host.naming import NamedRegistry, owning_plugin


def matches(globs: Iterable[str], tool: str, plugin: str | None = None) -> bool:
    """Whether any of ``globs`` matches the tool ``tool`` registered by ``plugin`` (None: not
    by a plugin, or not known)."""
    names = [tool, plugin] if plugin else [tool]
    return any(fnmatchcase(name, glob) for glob in globs for name in names)


def unmatched(
    globs: Iterable[str], tools: Mapping[str, str | None], plugins: Mapping[str, bool]
) -> list[tuple[str, str]]:
    """The globs that match no tool of ``tools`` (each tool's name → the plugin that registered
    it, None: none), in order, each with why, for a warning: ``matches no tool and no plugin``,
    or the running plugins it matches, which register no tool (``mcp``, with the glob of its
    sub-plugins). ``plugins`` maps each plugin's name to whether it runs; a glob matching one
    that does not (a blocked or failed server: it may register tools once it runs) is left
    out."""
    found: list[tuple[str, str]] = []
    for glob in globs:
        if any(matches([glob], tool, plugin) for tool, plugin in tools.items()):
            continue
        named = [name for name in plugins if fnmatchcase(name, glob)]
        if not named:
            found.append((glob, "matches no tool and no plugin"))
        elif all(plugins[name] for name in named):
            found.append((glob, _plugins_of_no_tool(named, plugins)))
    return found


def _plugins_of_no_tool(named: list[str], plugins: Iterable[str]) -> str:
    """``matches plugin "mcp", which registers no tool; "mcp.*" matches its sub-plugins'
    tools``."""
    one = len(named) == 1
    listed = ", ".join(f'"{name}"' for name in named)
    why = f"matches plugin{'' if one else 's'} {listed}, which register{'s' if one else ''} no tool"
    present = list(plugins)
    parents = [name for name in named if any(p.startswith(f"{name}.") for p in present)]
    if parents:
        subs = ", ".join(f'"{name}.*"' for name in parents)
        verb = "matches" if len(parents) == 1 else "match"
        why += f"; {subs} {verb} {'its' if one else 'their'} sub-plugins' tools"
    return why


def registered_by(registry: NamedRegistry[Any], name: str, item: object = None) -> str | None:
    """The plugin that registered ``name`` in ``registry`` (the global tools); None when no
    plugin did, or when ``item`` is given and is not what is registered under ``name`` (an
    agent's own tool of the same name)."""
    if item is not None and registry.get(name) is not item:
        return None
    return owning_plugin(registry.owner(name))


def plugins_by_tool(registry: NamedRegistry[Any]) -> dict[str, str | None]:
    """Each tool of ``registry`` (the global tools) → the plugin that registered it (None: no
    plugin), what ``unmatched`` and a profile's ``widening`` judge globs against."""
    return {name: registered_by(registry, name) for name in registry}
