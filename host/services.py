"""The service context: named services that plugins provide and look up.

Registration returns a disposer; every change notifies listeners, which is what drives plugin
activation (a plugin activates while the services it requires are present).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from host.disposal import Disposer
from host.errors import HostError
from host.naming import NamedRegistry

ChangeListener = Callable[[str, bool], None]
T = TypeVar("T")


def checked(name: str, service: Any, kind: type[T] | None) -> Any:
    """``service`` (None stays None) when no ``kind`` is asked for or it is a ``kind``;
    ``TypeError`` naming the service otherwise, or when ``kind`` is not a checkable type."""
    if kind is None or service is None:
        return service
    if not isinstance(kind, type):
        raise TypeError(f'service "{name}": {kind!r} is not a type')
    try:
        matches = isinstance(service, kind)
    except TypeError:  # a Protocol without @runtime_checkable
        raise TypeError(
            f'service "{name}": {kind.__qualname__} cannot be checked at run time '
            "(a Protocol needs @typing.runtime_checkable)"
        ) from None
    if not matches:
        raise TypeError(
            f'service "{name}" is a {type(service).__qualname__}, not a {kind.__qualname__}'
        )
    return service


class Lookup(Protocol):
    """What the host's own code reads of a call's service context (``host.services.Services``
    at run time, ``host.api.ServiceContext`` to plugins): a service by name."""

    def find(self, name: str) -> Any | None:
        """The service ``name``, or None when absent."""
        ...


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


class _Default:
    """A default provider of one name, serving or waiting behind another provider."""

    def __init__(self, service: Any, owner: str) -> None:
        self.service = service
        self.owner = owner
        self.remove: Callable[[], bool] = lambda: False


class Services:
    """Named services with strict (``get``, attribute) and optional (``find``) lookup.

    A provider registered with ``default=True`` (what the host's built-in plugins provide)
    steps aside when another provider registers the same name and comes back when that one
    withdraws; the name stays present throughout (listeners hear it registered again).
    """

    def __init__(self) -> None:
        self._services = NamedRegistry[Any]("service")
        self._listeners: list[ChangeListener] = []
        self._serving: dict[str, _Default] = {}
        self._waiting: dict[str, _Default] = {}

    def register(self, name: str, service: Any, *, owner: str, default: bool = False) -> Disposer:
        """Provide ``name``; a second provider raises unless the first is a default, which
        then steps aside until this one withdraws. The disposer withdraws it."""
        if default:
            return self._register_default(name, _Default(service, owner))
        if name in self._serving:
            self._step_aside(name)
        remove = self._services.register(name, service, owner=owner)
        self._notify(name, True)

        def dispose() -> None:
            if remove():
                waiting = self._waiting.pop(name, None)
                if waiting is not None:
                    self._serve(name, waiting)  # the name never goes away
                else:
                    self._notify(name, False)

        return dispose

    def _register_default(self, name: str, entry: _Default) -> Disposer:
        if name in self._services:
            self._waiting[name] = entry  # another provider came first: wait behind it
        else:
            self._serve(name, entry)

        def dispose() -> None:
            if self._serving.get(name) is entry:
                del self._serving[name]
                entry.remove()
                self._notify(name, False)
            elif self._waiting.get(name) is entry:
                del self._waiting[name]

        return dispose

    def _serve(self, name: str, entry: _Default) -> None:
        entry.remove = self._services.register(name, entry.service, owner=entry.owner)
        self._serving[name] = entry
        self._notify(name, True)

    def _step_aside(self, name: str) -> None:
        entry = self._serving.pop(name)
        entry.service = self._services.get(name)  # as built so far, if it was Lazy
        entry.remove()
        self._waiting[name] = entry  # the replacement registers (and notifies) right away

    def displaces_default(self, name: str) -> bool:
        """True while a default provider serves ``name`` (another provider would replace it)."""
        return name in self._serving

    def get(self, name: str, kind: type[T] | None = None) -> Any:
        """The service ``name``; raises ``ServiceUnavailable`` when absent, and ``TypeError``
        when ``kind`` is given and the service is not one (``checked``)."""
        if name not in self._services:
            raise ServiceUnavailable(name)
        return self.find(name, kind)

    def find(self, name: str, kind: type[T] | None = None) -> Any | None:
        """The service ``name``, or None when absent (a ``Lazy`` one is built now); with
        ``kind``, ``TypeError`` when the service is not one."""
        service = self._services.get(name)
        if isinstance(service, Lazy):
            lazy, service = service, service.factory()
            self._services.replace(name, lazy, service)
        return service if kind is None else checked(name, service, kind)

    def built(self, name: str) -> Any | None:
        """The service ``name`` if it exists and is built; never builds a ``Lazy`` one."""
        service = self._services.get(name)
        return None if isinstance(service, Lazy) else service

    def has(self, name: str) -> bool:
        """True while ``name`` is registered."""
        return name in self._services

    def provider(self, name: str) -> str | None:
        """The owner (plugin name) that registered ``name``."""
        owner = self._services.owner(name)
        return None if owner is None else str(owner)

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
