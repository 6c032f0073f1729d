"""The registration table: one entry per hook the host calls on activation.

An entry (``HookEntry``) says all the host does with its hook: the pluggy spec (when a layer
above the plugin system brings it, e.g. ``register_profiles``), its place (the table's order is
the activation order), the service its implementations imply, the live ``register`` callback
(it adds, records in the activation's scope the disposer that takes it back, and notes the
names under its hook in the record's ``added``, which goes with the activation) and the
staged ``check`` a hot reload runs instead (it raises as ``register`` would and adds nothing;
the live call is held until the swap). Activation, staging and reload read the same table,
so adding a hook is one entry plus its documentation.

The plugin system's own entries are here (``register_services``, ``activate``,
``register_plugins``); the host adds its own (``host.hooks``). The table sits below the
lifecycle and the staging that read it: what its entries use of them is named here, as
``Plugins`` (the lifecycle: services, adding and removing a sub-plugin) and ``Staged`` (a
version being staged: its record, held services and claimed names).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from types import ModuleType
from typing import Any, Protocol

import attrs

from host.disposal import Scope
from host.naming import DuplicateNameError, NamedRegistry
from host.plugins.discovery import PluginCandidate
from host.plugins.record import PluginRecord
from host.services import Services

SUB_PLUGIN_NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")
"""What a sub-plugin's own name (after ``<parent>.``) may be."""

Apply = Callable[[Callable[..., Any]], Any]
"""How a held registration reaches its live ``register`` at the swap (a ``check`` returns one
when it is not a call with the same arguments)."""


class Plugins(Protocol):
    """What the table's entries use of the plugin lifecycle (``host.plugins.lifecycle.
    PluginLifecycle``, which reads the table): the services, and adding or removing a
    sub-plugin."""

    @property
    def services(self) -> Services:
        """The services plugins register and look up."""
        ...

    def add(self, candidate: PluginCandidate, *, blocked: str | None = None) -> object:
        """Load and record a plugin (it activates on the lifecycle's next pass)."""
        ...

    def remove(self, name: str) -> None:
        """Take plugin ``name`` down and forget it."""
        ...


class Holding(Protocol):
    """What a staged check holds its services in (``host.plugins.staging.StagedServices``):
    the staged version's own hooks find them there until the swap."""

    def hold(self, name: str, service: Any) -> None:
        """Serve ``service`` as ``name`` to the staged version until the swap."""
        ...

    def held(self, name: str) -> Any:
        """What ``name`` is held as now (built, if a lookup built it)."""
        ...


class Staged(Protocol):
    """What the table's ``check`` callbacks use of a plugin's version being staged
    (``host.plugins.staging.Stage``, which reads the table): its record, the lifecycle, the
    services it holds, and the names it claimed."""

    @property
    def lifecycle(self) -> Plugins:
        """The plugin lifecycle."""
        ...

    @property
    def record(self) -> PluginRecord:
        """The running version's record."""
        ...

    @property
    def ctx(self) -> Holding:
        """The staged version's services, held ones first."""
        ...

    def claimed(self, what: str) -> set[str]:
        """The names of kind ``what`` (``service``, ``model``, …) this version registered."""
        ...

    def claim(self, registry: NamedRegistry[Any], name: str) -> None:
        """Refuse ``name`` when another plugin holds it or this version claimed it already."""
        ...


@attrs.frozen
class Registrant:
    """A plugin activating: its record, the scope of this activation, and the lifecycle."""

    lifecycle: Plugins
    record: PluginRecord
    scope: Scope


@attrs.frozen
class HookEntry:
    """One hook of the registration table; see the module docstring.

    ``register(registrant, *args)`` is the live ``register`` argument of the hook, bound to
    the plugin (None for a hook without one, such as ``activate``); ``check(stage, *args)``
    its staged twin (``stage``: a ``Staged``), returning None when the held call is the live
    one with the same arguments, else how to make it (``Apply``).
    ``specs`` holds the ``@hookspec`` of a hook added above the plugin system; ``requires`` is
    a service its implementations imply (``register_models``: ``models``).
    """

    name: str
    register: Callable[..., Any] | None = None
    check: Callable[..., Apply | None] | None = None
    specs: ModuleType | type | None = None
    requires: str | None = None

    def bind(self, registrant: Registrant) -> Callable[..., Any] | None:
        """The live ``register`` callback handed to ``registrant``'s hook (None: it has none)."""
        return None if self.register is None else functools.partial(self.register, registrant)


def _register_service(registrant: Registrant, name: str, service: Any) -> None:
    record, services = registrant.record, registrant.lifecycle.services
    builtin = record.candidate.builtin
    if not builtin and services.displaces_default(name):
        record.added["displaced"].append(name)
    registrant.scope.add(services.register(name, service, owner=record.name, default=builtin))
    record.added["register_services"].append(name)


def _check_service(stage: Staged, name: str, service: Any) -> Apply:
    services, plugin = stage.lifecycle.services, stage.record.name
    provider = services.provider(name)
    claimed = stage.claimed("service")
    if not stage.record.candidate.builtin:  # a built-in's provider steps aside, never clashes
        if name in claimed:
            raise DuplicateNameError("service", name, plugin, plugin)
        if provider not in (None, plugin) and not services.displaces_default(name):
            raise DuplicateNameError("service", name, plugin, provider or "")
    claimed.add(name)
    stage.ctx.hold(name, service)
    return lambda register: register(name, stage.ctx.held(name))  # what a lookup built


def check_sub_plugin(name: str, load: Callable[[], Any]) -> None:
    """Refuse a sub-plugin registration with a bad name or a ``load`` that is not callable."""
    if not isinstance(name, str) or not SUB_PLUGIN_NAME.fullmatch(name):
        raise ValueError(f"sub-plugin name {name!r} is not 1-32 of [A-Za-z0-9_-]")
    if not callable(load):
        raise TypeError(f"sub-plugin {name!r}: load must be callable, got {load!r}")


SERVICES = HookEntry("register_services", _register_service, _check_service)
ACTIVATE = HookEntry("activate")
def _register_plugin(
    registrant: Registrant, name: str, load: Callable[[], Any], *, blocked: str | None = None
) -> None:
    """The ``register`` of ``register_plugins``: add ``<parent>.<name>`` as a plugin."""
    check_sub_plugin(name, load)
    lifecycle, parent = registrant.lifecycle, registrant.record
    full = f"{parent.name}.{name}"
    origin = parent.candidate
    lifecycle.add(
        PluginCandidate(
            name=full,
            load=load,
            entry_point=f"{origin.entry_point} [{name}]",
            distribution=origin.distribution,
            version=origin.version,
            builtin=origin.builtin,
            parent=parent.name,
        ),
        blocked=blocked,
    )  # reconcile activates it on its next pass
    registrant.scope.add(lambda: lifecycle.remove(full))


def _check_plugin(
    stage: Staged, name: str, load: Callable[[], Any], *, blocked: str | None = None
) -> None:
    check_sub_plugin(name, load)


PLUGINS = HookEntry("register_plugins", _register_plugin, _check_plugin)
