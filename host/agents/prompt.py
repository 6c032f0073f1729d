"""Prompt sections: named, ordered pieces of the system prompt, layered global + agent-own.

Plugins register global sections; each agent has its own layer on top. An own section shadows
a global one of the same name; a duplicate name within one layer is an error (``NamedRegistry``).
The system prompt is the texts of the visible sections, ordered by ``order`` (ties: global
before own, then registration order), joined by blank lines.
"""

from __future__ import annotations

import attrs

from host.disposal import Disposer
from host.naming import NamedRegistry


@attrs.frozen
class PromptSection:
    """One named piece of the system prompt; lower ``order`` comes first."""

    name: str
    text: str
    order: int = 0


def section_registry(what: str = "prompt section") -> NamedRegistry[PromptSection]:
    """A fresh layer of sections (the global registry, or one agent's own scope)."""
    return NamedRegistry[PromptSection](what)


def register_section(
    registry: NamedRegistry[PromptSection], section: PromptSection, *, owner: str
) -> Disposer:
    """Register ``section`` under its own name; returns the disposer that removes it."""
    return registry.register(section.name, section, owner=owner)


@attrs.frozen
class SectionView:
    """What one agent's prompt is built from: its own sections over the global ones."""

    global_sections: NamedRegistry[PromptSection]
    own: NamedRegistry[PromptSection] = attrs.field(
        factory=lambda: section_registry("scoped prompt section")
    )

    def sections(self) -> list[PromptSection]:
        """The visible sections in prompt order (shadowed global sections left out)."""
        own_names = set(self.own)
        layered = [s for name, s in self.global_sections.items() if name not in own_names]
        layered += [s for _, s in self.own.items()]
        return sorted(layered, key=lambda section: section.order)  # stable: keeps layer order

    def system_prompt(self) -> str:
        """The assembled system prompt (empty texts are skipped)."""
        return "\n\n".join(section.text for section in self.sections() if section.text)
