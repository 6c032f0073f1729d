"""The service context: named services that plugins provide and look up.

Registration returns a disposer; every change notifies listeners, which is what drives plugin
activation (a plugin activates while the services it requires are present).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from host.disposal import Disposer
from host.errors import HostError
from host.naming import NamedRegistry

ChangeListener = Callable[[str, bool], None]


class Lazy:
    """A service built on first lookup: ``register(name, Lazy(factory))``.

    Registration (and so plugin activation) stays cheap: a command that never uses a
    service never imports or builds it. The factory runs once.
    """

    def __init__(self, factory: Callable[[], Any]) -> None:
        self.factory = factory


class ServiceUnavailable(HostError):
    """A strict lookup of a service that is not registered."""

    def __init__(self, name: str) -> None:
        super().__init__("SERVICE_UNAVAILABLE", f'service "{name}" is not available')
        self.name = name


class Services:
    """Named services with strict (``get``, attribute) and optional (``find``) lookup."""

    def __init__(self) -> None:
        self._services = NamedRegistry[Any]("service")
        self._listeners: list[ChangeListener] = []

    def register(self, name: str, service: Any, *, owner: str) -> Disposer:
        """Provide ``name``; a second provider raises. The disposer withdraws it."""
        remove = self._services.register(name, service, owner=owner)
        self._notify(name, True)

        def dispose() -> None:
            if remove():
                self._notify(name, False)

        return dispose

    def get(self, name: str) -> Any:
        """The service ``name``; raises ``ServiceUnavailable`` when absent."""
        if name not in self._services:
            raise ServiceUnavailable(name)
        return self.find(name)

    def find(self, name: str) -> Any | None:
        """The service ``name``, or None when absent (a ``Lazy`` one is built now)."""
        service = self._services.get(name)
        if isinstance(service, Lazy):
            built = service.factory()
            self._services.replace(name, service, built)
            return built
        return service

    def built(self, name: str) -> Any | None:
        """The service ``name`` if it exists and is built; never builds a ``Lazy`` one."""
        service = self._services.get(name)
        return None if isinstance(service, Lazy) else service

    def has(self, name: str) -> bool:
        """True while ``name`` is registered."""
        return name in self._services

    def provider(self, name: str) -> str | None:
        """The owner (plugin name) that registered ``name``."""
        return self._services.owner(name)

    def names(self) -> list[str]:
        """Registered service names in registration order."""
        return list(self._services)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return self.get(name)

    def subscribe(self, listener: ChangeListener) -> Disposer:
        """Call ``listener(name, present)`` after every registration and withdrawal."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _notify(self, name: str, present: bool) -> None:
        for listener in list(self._listeners):
            listener(name, present)
