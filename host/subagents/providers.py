"""Subagent providers: named, data-only ways to start children (docs/subagents.md).

Two are built in: ``spawn`` (a fresh child session) and ``fork`` (a child seeded with its
parent's context). Plugins register more with ``ProviderRegistry.register``; a second provider
of the same name is ``DUPLICATE_PROVIDER``, an unknown name is ``NO_PROVIDER``.
"""

from __future__ import annotations

from host.disposal import Disposer
from host.subagents import texts
from host.subagents.types import Provider

SPAWN = Provider(name="spawn", seeding="fresh")
"""The built-in provider of fresh children."""

FORK = Provider(name="fork", seeding="fork")
"""The built-in provider of children seeded with the parent's events."""

BUILTIN_PROVIDERS: tuple[Provider, ...] = (SPAWN, FORK)


class ProviderRegistry:
    """Providers by name, the built-ins first."""

    def __init__(self, builtins: tuple[Provider, ...] = BUILTIN_PROVIDERS) -> None:
        self._providers: dict[str, Provider] = {p.name: p for p in builtins}

    def register(self, provider: Provider) -> Disposer:
        """Add ``provider``; returns the idempotent disposer that removes exactly it."""
        if not isinstance(provider, Provider):
            raise TypeError(f"expected a host.subagents.types.Provider, got {provider!r}")
        if provider.name in self._providers:
            raise texts.duplicate_provider(provider.name)
        self._providers[provider.name] = provider

        def dispose() -> None:
            if self._providers.get(provider.name) is provider:
                del self._providers[provider.name]

        return dispose

    def resolve(self, name: str) -> Provider:
        """The provider called ``name``; ``NO_PROVIDER`` if there is none."""
        found = self._providers.get(name)
        if found is None:
            raise texts.no_provider(name)
        return found

    def names(self) -> list[str]:
        """Registered provider names in registration order."""
        return list(self._providers)


def check_depth(provider: Provider, child_depth: int) -> None:
    """``DEPTH_EXCEEDED`` when a child at ``child_depth`` is beyond the provider's limit."""
    limit = provider.capabilities.depth_limit
    if child_depth > limit:
        raise texts.depth_exceeded(provider.name, child_depth, limit)
