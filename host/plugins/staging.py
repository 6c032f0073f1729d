"""Staging: a plugin's new version activates beside the running one, then swaps in at once.

A hot reload (``host.plugins.reload``) stages the new plugin object while the old version
keeps serving: the object is adopted into a shadow record and its hooks run in the manager's
``activation_order`` (``take_over_state`` first, when the old version handed state over).

* What the hooks register is checked at once, as the host would check it (not a ``Tool``, a
  name another plugin holds, a bad sub-plugin name, what an added hook's ``check`` refuses
  raise there) but is *held*: tools, prompt sections, services, models, the items of added
  hooks and sub-plugins reach the host only at the swap.
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
from host.plugins.lifecycle import check_sub_plugin
from host.plugins.record import PluginRecord
from host.services import Lazy, Services, checked

if TYPE_CHECKING:
    from host.plugins.lifecycle import PluginManager

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

    ``Stage(manager, record, obj)`` adopts ``obj`` (raising, with nothing changed, when it is
    unusable); ``run(state)`` calls its hooks; then ``swap()`` or ``abandon()``.
    """

    def __init__(self, manager: PluginManager, record: PluginRecord, obj: Any) -> None:
        self.manager = manager
        self.record = record
        self.shadow = PluginRecord(record.candidate)
        manager.adopt(self.shadow, obj)
        self.scope = Scope(str(Owner(record.name)))
        self.handle = PluginHandle(manager, record.name)
        self.ctx = StagedServices(manager.services, record.name)
        self._held: list[_Held] = []
        self._claimed: dict[str, set[str]] = {}
        self._pluggy_name = f"{record.name} (staged)"

    def missing(self) -> list[str]:
        """Services the new version requires that are absent now."""
        return self.shadow.missing(set(self.manager.services.names()))

    def provided(self) -> set[str]:
        """The service names the staged version registered (held until the swap)."""
        return set(self._claimed.get("service", ()))

    def hand_over(self) -> Any:
        """Call the running version's ``hand_over_state``: what its successor starts from."""
        impls = self.manager.pm.implementations(self.record.obj).get("hand_over_state", ())
        results = self.manager.call(self.record, impls, {"ctx": self.manager.services})
        return results[-1] if results else None

    def run(self, state: Any = NOTHING, only: str | None = None) -> None:
        """Call the new version's hooks (``take_over_state`` first when ``state`` was handed
        over; just the hook ``only`` when given); when one raises, everything it did is undone
        and the error propagates (in a group with whatever the undoing raised, if any)."""
        manager, obj = self.manager, self.shadow.obj
        available = {"ctx": self.ctx, "scope": self.scope, "plugin": self.handle, "state": state}
        try:
            if manager.pm.get_name(obj) is None:  # else: the running object, reloaded as is
                manager.pm.register(obj, name=self._pluggy_name)
            self.scope.add(lambda: manager.unregister(self._pluggy_name))
            manager.check_hooks(obj)
            implementations = manager.pm.implementations(obj)
            hooks: tuple[str, ...] = manager.activation_order if only is None else (only,)
            if state is not NOTHING:
                hooks = ("take_over_state", *hooks)
            for hook in hooks:
                impls = implementations.get(hook)
                if impls:
                    manager.call(self.shadow, impls, available, self._registrar(hook))
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
        manager, record = self.manager, self.record
        with manager.paused():
            retired = manager.retire(record)
            shadow = self.shadow
            record.obj, record.requires, record.uses = shadow.obj, shadow.requires, shadow.uses
            record.config, record.hooks = shadow.config, shadow.hooks
            record.scope, record.handle = self.scope, self.handle
            record.tools, record.services = self.shadow.tools, self.shadow.services
            record.displaced, record.models = self.shadow.displaced, self.shadow.models
            try:
                manager.unregister(self._pluggy_name)
                self._pluggy_name = record.name
                if manager.pm.get_plugin(record.name) is None:
                    manager.pm.register(record.obj, name=record.name)
                for held in self._held:
                    held.add()
            except Exception as error:
                manager.retire(record)
                record.fail(error)
            else:
                record.activated()
                manager.refresh_dependents(record)
            finally:
                self.ctx.settle()
        return retired

    # -- held registrations ----------------------------------------------------------------

    def _registrar(self, hook: str) -> Callable[..., Any] | None:
        """The staged ``register`` of ``hook``: check now, hold the live call for the swap."""
        live = self.manager.registrar(hook, self.shadow, self.scope)
        if live is None:
            return None
        added = self.manager.registrars.added.get(hook)
        check: Callable[..., None] = (
            added.check(self.record.name) if added is not None else getattr(self, f"_check_{hook}")
        )

        def register(*args: Any, **kwargs: Any) -> Callable[[], None]:
            if self.scope.disposed:
                raise RuntimeError(f"{Owner(self.record.name)} is no longer being staged")
            check(*args, **kwargs)
            apply: Callable[[], Any] = functools.partial(live, *args, **kwargs)
            if hook == "register_services":
                name = args[0] if args else kwargs["name"]
                apply = functools.partial(self._add_service, live, name)
            held = _Held(apply)
            self._held.append(held)
            return held.dispose

        return register

    def _add_service(self, live: Callable[[str, Any], Any], name: str) -> Any:
        """Register held service ``name`` live: the object a staged lookup built, if any."""
        return live(name, self.ctx.held(name))

    def _claim(self, registry: NamedRegistry[Any], name: str) -> None:
        """Refuse ``name`` when another plugin holds it or this version claimed it already."""
        owner = Owner(self.record.name)
        claimed = self._claimed.setdefault(registry.what, set())
        existing = registry.owner(name)
        if name in claimed:
            raise DuplicateNameError(registry.what, name, owner, owner)
        if existing is not None and existing != owner:
            raise DuplicateNameError(registry.what, name, owner, existing)
        claimed.add(name)

    def _check_register_services(self, name: str, service: Any) -> None:
        services, plugin = self.manager.services, self.record.name
        provider = services.provider(name)
        claimed = self._claimed.setdefault("service", set())
        if not self.record.candidate.builtin:  # a built-in's provider steps aside, never clashes
            if name in claimed:
                raise DuplicateNameError("service", name, plugin, plugin)
            if provider not in (None, plugin) and not services.displaces_default(name):
                raise DuplicateNameError("service", name, plugin, provider or "")
        claimed.add(name)
        self.ctx.hold(name, service)

    def _check_register_models(self, name: str, model: Any) -> None:
        models = self.manager.services.find("models")
        taken = set(models.names()) - set(self.record.models) if models is not None else set()
        claimed = self._claimed.setdefault("model", set())
        if name in claimed or name in taken:
            owner = Owner(self.record.name)
            raise DuplicateNameError("model", name, owner, "another plugin")
        claimed.add(name)

    def _check_register_prompt_sections(self, name: str, text: str, order: int = 0) -> None:
        self.manager.registrars.make_section(name, text, order)
        self._claim(self.manager.registrars.sections, name)

    def _check_register_tools(self, tool: Any) -> None:
        from host.tools.tool import Tool  # the tool hook's own: the plugin layer loads no tools

        if not isinstance(tool, Tool):
            raise TypeError(f"register_tools expects host.tools.Tool, got {tool!r}")
        tool.parameters  # noqa: B018 - as the live registrar: a bad function schema raises here
        self._claim(self.manager.registrars.tools, tool.name)

    def _check_register_plugins(
        self, name: str, load: Callable[[], Any], *, blocked: str | None = None
    ) -> None:
        check_sub_plugin(name, load)
