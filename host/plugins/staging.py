"""Staging: a plugin's new version activates beside the running one, then swaps in at once.

A hot reload (``host.plugins.reload``) stages the new plugin object while the old version
keeps serving: the object is adopted into a shadow record and its hooks run in the lifecycle's
``activation_order`` (``take_over_state`` first, when the old version handed state over).

* What the hooks register is checked at once by the ``check`` of the hook's entry in the
  registration table (``host.plugins.registrations``), as its live ``register`` would check
  it (not a ``Tool``, a name another plugin holds, a bad sub-plugin name raise there), but
  is *held*: tools, prompt sections, services, models, profiles and sub-plugins reach the
  host only at the swap, through that entry's ``register``.
* The new version's own hooks see its held services: their ``ctx`` is a ``StagedServices``,
  those services over the live ones (and just the live ones once the stage is settled). Its
  tools and prompt sections are not in the registries yet: there, the old ones still serve.
* Whatever ``activate`` does beyond registering (a setup contribution, a thread) is live at
  once; its disposers are in the stage's scope.

``abandon`` (when anything raised) disposes that scope and drops what was held: the running
version and its dependents never noticed. ``swap`` is one synchronous step, so no tool call or
model step runs in between: the old version's dependents are taken down, its scope disposed
(a disposer that raises is returned and the old scope abandoned; the swap goes on), everything
held is added, and plugins using what changed restart (reconcile brings the dependents back).
A registration the host refuses at the swap although staging accepted it leaves the plugin
``failed``. Tool calls already running hold the old ``Tool`` objects and finish on the old
code; the swap does not wait for them, so such a call runs on after the old scope was
disposed (a resource that scope's disposer closed is closed for it too).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from host.disposal import Scope, roll_back
from host.naming import DuplicateNameError, NamedRegistry, Owner
from host.plugins.handles import PluginHandle
from host.plugins.record import PluginRecord
from host.plugins.registrations import HookEntry, Registrant, Staged
from host.services import Lazy, Services, checked

if TYPE_CHECKING:
    from host.plugins.lifecycle import PluginLifecycle

NOTHING: Any = object()
"""``state`` when the old version handed nothing over (it has no ``hand_over_state``)."""


class StagedServices:
    """The ``ctx`` of a staged version: its held services over the live ``Services``.

    Lookups answer the held service first (a ``Lazy`` one is built here, once, and that object
    is what the swap registers); everything else is the live context's. Once settled (swapped
    or abandoned) it is a plain view of the live services.
    """

    def __init__(self, live: Services, owner: str) -> None:
        self._live = live
        self._owner = owner
        self._held: dict[str, Any] = {}

    def hold(self, name: str, service: Any) -> None:
        """Serve ``service`` as ``name`` to the staged version until settled."""
        self._held[name] = service

    def held(self, name: str) -> Any:
        """What ``name`` is held as now (built, if a lookup built it)."""
        return self._held[name]

    def settle(self) -> None:
        """Answer from the live services alone from now on."""
        self._held.clear()

    def find(self, name: str, kind: type | None = None) -> Any | None:
        """As ``Services.find``, the held service first."""
        if name not in self._held:
            return self._live.find(name, kind)
        service = self._held[name]
        if isinstance(service, Lazy):
            service = self._held[name] = service.factory()
        return checked(name, service, kind)

    def get(self, name: str, kind: type | None = None) -> Any:
        """As ``Services.get``, the held service first."""
        return self.find(name, kind) if name in self._held else self._live.get(name, kind)

    def built(self, name: str) -> Any | None:
        """As ``Services.built``, the held service first."""
        if name in self._held:
            service = self._held[name]
            return None if isinstance(service, Lazy) else service
        return self._live.built(name)

    def has(self, name: str) -> bool:
        """As ``Services.has``, held services included."""
        return name in self._held or self._live.has(name)

    def provider(self, name: str) -> str | None:
        """As ``Services.provider``: the staged plugin for a held service."""
        return self._owner if name in self._held else self._live.provider(name)

    def names(self) -> list[str]:
        """As ``Services.names``, held services last."""
        live = self._live.names()
        return live + [name for name in self._held if name not in live]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in self._held:
            return self.get(name)
        return getattr(self._live, name)  # register, subscribe, … and services by attribute


class _Held:
    """One registration held until the swap; its disposer works before and after."""

    def __init__(self, apply: Callable[[], Any]) -> None:
        self._apply = apply
        self._result: Any = None
        self._added = False
        self._cancelled = False

    def add(self) -> None:
        """Register it now (the swap), unless it was taken back meanwhile."""
        if not self._cancelled:
            self._added = True
            self._result = self._apply()

    def dispose(self) -> None:
        """Take it back: dropped before the swap, the host's own disposer after."""
        if not self._added:
            self._cancelled = True
        elif callable(self._result):
            self._result()


class Stage:
    """A plugin's new version, activated beside the running one; see the module docstring.

    ``Stage(lifecycle, record, obj)`` adopts ``obj`` (raising, with nothing changed, when it is
    unusable); ``run(state)`` calls its hooks; then ``swap()`` or ``abandon()``. What its hooks
    register goes through the ``check`` of their entry in the registration table
    (``host.plugins.registrations``), which may ``claim`` names here.
    """

    def __init__(self, lifecycle: PluginLifecycle, record: PluginRecord, obj: Any) -> None:
        self.lifecycle = lifecycle
        self.record = record
        self.shadow = PluginRecord(record.candidate)
        lifecycle.adopt(self.shadow, obj)
        self.scope = self.shadow.scope = Scope(str(Owner(record.name)))
        self.handle = self.shadow.handle = PluginHandle(lifecycle, record.name)
        self.ctx = StagedServices(lifecycle.services, record.name)
        self._held: list[_Held] = []
        self._claimed: dict[str, set[str]] = {}
        self._pluggy_name = f"{record.name} (staged)"

    def provided(self) -> set[str]:
        """The service names the staged version registered (held until the swap)."""
        return set(self._claimed.get("service", ()))

    def run(self, state: Any = NOTHING, only: str | None = None) -> None:
        """Call the new version's hooks (``take_over_state`` first when ``state`` was handed
        over; just the hook ``only`` when given); when one raises, everything it did is undone
        and the error propagates (in a group with whatever the undoing raised, if any)."""
        lifecycle, obj = self.lifecycle, self.shadow.obj
        available = {"ctx": self.ctx, "scope": self.scope, "plugin": self.handle, "state": state}
        try:
            if lifecycle.pm.get_name(obj) is None:  # else: the running object, reloaded as is
                lifecycle.pm.register(obj, name=self._pluggy_name)
            self.scope.add(lambda: lifecycle.unregister(self._pluggy_name))
            hooks: tuple[str, ...] = lifecycle.activation_order if only is None else (only,)
            if state is not NOTHING:
                hooks = ("take_over_state", *hooks)
            lifecycle.run_hooks(self.shadow, obj, hooks, available, self._bind)
        except Exception as error:
            undone = self.abandon(handed_back=state is not NOTHING and state is not None)
            roll_back(
                error, lambda: undone.exceptions if undone else (), "staging failed", chain=False
            )
            raise

    def abandon(self, *, handed_back: bool = False) -> ExceptionGroup[Exception] | None:
        """Undo the staged version; returns what its disposers raised (nothing propagates).

        ``handed_back``: the state it took over stays the old version's (``handed_over``).
        """
        self.handle.handed_over = handed_back
        self._held.clear()
        self.ctx.settle()
        try:
            self.scope.dispose()
        except ExceptionGroup as errors:
            return errors
        return None

    def swap(self) -> ExceptionGroup[Exception] | None:
        """Replace the running version by the staged one in one step; returns what the old
        version's disposers raised (its scope is abandoned, the new version installed)."""
        staged_as, self._pluggy_name = self._pluggy_name, self.record.name
        try:
            # what it registered, then its own lookups answered by the live services
            adds = [*(held.add for held in self._held), self.ctx.settle]
            return self.lifecycle.swap_in(self.record, self.shadow, staged_as, adds)
        finally:
            self.ctx.settle()

    # -- held registrations ----------------------------------------------------------------

    def _bind(self, entry: HookEntry, registrant: Registrant) -> Callable[..., Any] | None:
        """The staged ``register`` of ``entry``: check now, hold the live call for the swap."""
        if entry.register is None or entry.check is None:
            return None
        live = functools.partial(entry.register, registrant)
        stage: Staged = self  # what the entry's check sees of this stage
        check = functools.partial(entry.check, stage)

        def register(*args: Any, **kwargs: Any) -> Callable[[], None]:
            if self.scope.disposed:
                raise RuntimeError(f"{Owner(self.record.name)} is no longer being staged")
            apply = check(*args, **kwargs)
            held = _Held(
                functools.partial(apply, live)
                if apply is not None
                else functools.partial(live, *args, **kwargs)
            )
            self._held.append(held)
            return held.dispose

        return register

    def claimed(self, what: str) -> set[str]:
        """The names of kind ``what`` (``service``, ``tool``, …) this version registered."""
        return self._claimed.setdefault(what, set())

    def claim(self, registry: NamedRegistry[Any], name: str) -> None:
        """Refuse ``name`` when another plugin holds it or this version claimed it already."""
        owner = Owner(self.record.name)
        claimed = self._claimed.setdefault(registry.what, set())
        existing = registry.owner(name)
        if name in claimed:
            raise DuplicateNameError(registry.what, name, owner, owner)
        if existing is not None and existing != owner:
            raise DuplicateNameError(registry.what, name, owner, existing)
        claimed.add(name)
