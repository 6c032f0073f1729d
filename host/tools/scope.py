"""Layered tool scopes: an agent's own tools over the filtered global tools.

The filter (``allow``/``deny``) applies to the global layer only; a tool in the agent's own
scope is never filtered out and shadows a global tool of the same name.
"""

from __future__ import annotations

import attrs

from host.naming import NamedRegistry
from host.tools.tool import Tool


def tool_registry(what: str = "tool") -> NamedRegistry[Tool]:
    """A fresh layer of tools (the global registry, or one agent's own scope)."""
    return NamedRegistry[Tool](what)


@attrs.frozen
class ToolFilter:
    """Which global tools an agent may see: ``allow`` (None = all) minus ``deny``."""

    allow: tuple[str, ...] | None = None
    deny: tuple[str, ...] = ()

    def admits(self, name: str) -> bool:
        """True if a global tool called ``name`` passes the filter."""
        if self.allow is not None and name not in self.allow:
            return False
        return name not in self.deny


@attrs.frozen
class ToolView:
    """What one agent sees: its own layer first, then the global layer through the filter."""

    global_tools: NamedRegistry[Tool]
    own: NamedRegistry[Tool] = attrs.field(factory=lambda: tool_registry("scoped tool"))
    filter: ToolFilter = ToolFilter()

    def get(self, name: str) -> Tool | None:
        """The tool a call of ``name`` reaches, or None."""
        found = self.own.get(name)
        if found is not None:
            return found
        if self.filter.admits(name):
            return self.global_tools.get(name)
        return None

    def tools(self) -> list[Tool]:
        """Every visible tool: admitted global tools in order (shadowed ones replaced), then own."""
        own_names = set(self.own)
        visible = [
            tool
            for name, tool in self.global_tools.items()
            if self.filter.admits(name) and name not in own_names
        ]
        return visible + [tool for _, tool in self.own.items()]
