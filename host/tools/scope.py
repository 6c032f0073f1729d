"""Layered tool scopes: an agent's own tools over the filtered global tools.

The filter (``host.tools.filter.ToolFilter``: by tool globs, which match a tool's name or the
plugin that registered it, and by that plugin) applies to the global layer only; a tool in the
agent's own scope is never filtered out and shadows a global tool of the same name. A global
tool with an ``offered_to`` predicate is visible only to agents whose session header it accepts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from host.naming import NamedRegistry, owning_plugin
from host.tools.filter import ToolFilter
from host.tools.tool import Tool

if TYPE_CHECKING:  # only for annotations: keeps the session model off start-up
    from host.sessions.model import SessionHeader


def tool_registry(what: str = "tool") -> NamedRegistry[Tool]:
    """A fresh layer of tools (the global registry, or one agent's own scope)."""
    return NamedRegistry[Tool](what)


@attrs.frozen
class ToolView:
    """What one agent sees: its own layer first, then the global layer through the filter."""

    global_tools: NamedRegistry[Tool]
    own: NamedRegistry[Tool] = attrs.field(factory=lambda: tool_registry("scoped tool"))
    filter: ToolFilter = attrs.field(factory=ToolFilter)
    header: SessionHeader | None = None

    def _admits(self, name: str, tool: Tool) -> bool:
        if not self.filter.admits(name, owning_plugin(self.global_tools.owner(name))):
            return False
        return tool.offered_to is None or self.header is None or tool.offered_to(self.header)

    def get(self, name: str) -> Tool | None:
        """The tool a call of ``name`` reaches, or None."""
        found = self.own.get(name)
        if found is not None:
            return found
        candidate = self.global_tools.get(name)
        if candidate is not None and self._admits(name, candidate):
            return candidate
        return None

    def tools(self) -> list[Tool]:
        """Every visible tool: admitted global tools in order (shadowed ones replaced), then own."""
        own_names = set(self.own)
        visible = [
            tool
            for name, tool in self.global_tools.items()
            if name not in own_names and self._admits(name, tool)
        ]
        return visible + [tool for _, tool in self.own.items()]
