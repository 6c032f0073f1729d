"""Plugin lifecycle: load, activate while required services exist, deactivate, fail in isolation.

A plugin activates when every service in its ``requires`` is present and deactivates (all it
registered disposed, dependents first) when one goes away; its hooks run in the order of the
registration table (``host.plugins.registrations``). Activation is all-or-nothing: if an
import, a hook or the activation raises, whatever it registered is disposed and the plugin is
``failed`` with a one-line error; the host and every other plugin keep working. Sub-plugins
(``register_plugins``) are plugins of their own, ``<parent>.<name>``, removed with the parent.

A disposer that raises never escapes a deactivation: the plugin is ``failed`` with the error,
and ``close`` returns every such failure (``DisposalFailure``) instead of raising. A hot reload
activates the new version beside the running one (``host.plugins.staging``) and swaps it in.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any

import pluggy

from host.disposal import Scope
from host.naming import Owner
from host.plugins import hookspecs
from host.plugins.config import structure_config
from host.plugins.discovery import PluginCandidate
from host.plugins.handles import PluginHandle as PluginHandle
from host.plugins.handles import PluginStates as PluginStates
from host.plugins.hookmanager import HookManager, new_hook_manager
from host.plugins.record import (
    DisposalFailure,
    PluginRecord,
    implemented_hooks,
    requirements,
    service_names,
)
from host.plugins.record import describe_error as describe_error
from host.plugins.registrations import HookEntry, Registrant
from host.plugins.selection import Selection
from host.services import Services


class PluginLifecycle:
    """Owns the pluggy manager, one record per plugin, the registration table and the
    activation loop."""

    def __init__(
        self,
        services: Services,
        table: Sequence[HookEntry],
        *,
        selection: Selection = Selection(),
        config_tables: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.services = services
        self.table = {entry.name: entry for entry in table}
        self.selection = selection
        self.config_tables = config_tables or {}
        self.activation_order = tuple(self.table)
        """The hooks called on activation, in order: the plugin system's and those added."""
        self._implied = {e.name: e.requires for e in table if e.requires is not None}
        self._hooks = (*self.activation_order, *hookspecs.HANDOVER_HOOKS)
        self.pm = self._new_hook_manager()
        self.records: dict[str, PluginRecord] = {}
        self._busy = False
        self._dirty = False
        self._leaving: list[str] | None = None  # while closing: names to take out of pluggy
        self._unsubscribe = services.subscribe(self._on_service_change)

    def _new_hook_manager(self) -> HookManager:
        return new_hook_manager(*(e.specs for e in self.table.values() if e.specs is not None))

    # -- loading ---------------------------------------------------------------------------

    def add(self, candidate: PluginCandidate, *, blocked: str | None = None) -> PluginRecord:
        """Load and record a candidate (unless blocked, by the selection or with the reason
        ``blocked``); it activates on ``reconcile``."""
        if candidate.name in self.records:
            raise ValueError(f'plugin "{candidate.name}" is already loaded')
        record = PluginRecord(candidate)
        self.records[candidate.name] = record
        self._dirty = True  # added while a parent activates: reconcile passes again
        reason = blocked or self.selection.blocked_reason(  # a sub-plugin: allowed as its parent
            candidate.name, builtin=candidate.builtin or candidate.parent is not None
        )
        if reason is not None:
            record.block(reason)
            return record
        try:
            self._load(record)
        except Exception as error:
            record.fail(error)
        return record

    def _load(self, record: PluginRecord) -> None:
        obj = record.candidate.load()
        # the hooks are known even if adopting it fails, as are the declared requires (a
        # malformed one fails in adopt)
        record.hooks = implemented_hooks(obj, self._hooks)
        with suppress(Exception):
            record.requires = requirements(obj, record.hooks, self._implied)
        self.adopt(record, obj)

    def adopt(self, record: PluginRecord, obj: Any) -> None:
        """Make ``obj`` the record's plugin object: check ``requires``, structure its config.

        Raises (and changes nothing) when the object is unusable.
        """
        hooks = implemented_hooks(obj, self._hooks)
        effective = requirements(obj, hooks, self._implied)
        uses = service_names(obj, "uses")
        table = self.config_tables.get(record.name)
        config = structure_config(record.name, getattr(obj, "Config", None), table)
        record.obj, record.requires, record.uses, record.config = obj, effective, uses, config
        record.hooks = hooks

    # -- activation ------------------------------------------------------------------------

    def reconcile(self) -> None:
        """Activate every inactive plugin whose requirements are met; repeat until stable."""
        if self._busy:
            self._dirty = True
            return
        self._busy = True
        try:
            self._dirty = True
            while self._dirty:
                self._dirty = False
                present = set(self.services.names())
                changed = False
                for record in list(self.records.values()):
                    if self._dirty:  # an activation changed the services: refresh, pass again
                        present = set(self.services.names())
                        self._dirty, changed = False, True
                    if record.state == "inactive" and not record.missing(present):
                        self._activate(record)
                    elif record.state == "active" and record.missing(present):
                        self._deactivate(record, "inactive")
                self._dirty = self._dirty or changed
        finally:
            self._busy = False

    def _activate(self, record: PluginRecord) -> None:
        scope = Scope(str(Owner(record.name)))
        record.scope, record.handle = scope, PluginHandle(self, record.name)
        available: dict[str, Any] = {"ctx": self.services, "scope": scope, "plugin": record.handle}
        try:
            self.pm.register(record.obj, name=record.name)
            scope.add(lambda: self.unregister(record.name))
            self.run_hooks(record, record.obj, self.activation_order, available)
        except Exception as error:
            self._dispose_scope(record)
            record.fail(error)
            return
        record.activated()
        self._refresh_dependents(record)

    def run_hooks(
        self,
        record: PluginRecord,
        obj: Any,
        hooks: Iterable[str],
        available: dict[str, Any],
        bind: Callable[[HookEntry, Registrant], Callable[..., Any] | None] = HookEntry.bind,
    ) -> None:
        """Call ``hooks`` of ``obj`` (registered in pluggy) in order for ``record``; a hook with
        a ``register`` in the table gets ``bind(entry, registrant)`` (the live callback unless
        a hot reload stages the object); raises what a hook raised."""
        self.pm.check_plugin(obj)
        implementations = self.pm.implementations(obj)
        for hook in hooks:
            impls = implementations.get(hook)
            if impls:
                entry, register = self.table.get(hook), None
                if entry is not None:
                    register = bind(entry, Registrant(self, record, available["scope"]))
                self._call(record, impls, available, register)

    def _refresh_dependents(self, record: PluginRecord) -> None:
        """Restart (deactivate now; reconcile activates again) the plugins that would keep
        using something else than what ``record`` just provided: those that ``uses`` one of
        its services, and those that require a service it took over from a built-in."""
        provided, displaced = set(record.services), set(record.added.pop("displaced", ()))
        if not provided:
            return
        restart = [
            other
            for other in self.records.values()
            if other is not record
            and other.state == "active"
            and (provided & set(other.uses) or displaced & set(other.requires))
        ]
        for other in reversed(restart):
            if other.state == "active":
                self._deactivate(other, "inactive")
        self._dirty = self._dirty or bool(restart)

    def hand_over(self, record: PluginRecord) -> Any:
        """Call the running version's ``hand_over_state``: what its successor starts from."""
        impls = self.pm.implementations(record.obj).get("hand_over_state", ())
        results = self._call(record, impls, {"ctx": self.services})
        return results[-1] if results else None

    def _call(
        self,
        record: PluginRecord,
        impls: Sequence[pluggy.HookImpl],
        available: dict[str, Any],
        register: Callable[..., Any] | None = None,
    ) -> list[Any]:
        """Call ``impls`` (one hook of ``record``) with the arguments each asks for among
        ``available``, ``config`` and ``register``; returns their results."""
        arguments = {**available, "config": record.config}
        if register is not None:
            arguments["register"] = register
        results = []
        for impl in impls:
            wanted = (*impl.argnames, *impl.kwargnames)  # arguments with defaults too, as pluggy
            results.append(
                impl.function(**{name: arguments[name] for name in wanted if name in arguments})
            )
        return results

    def remove(self, name: str) -> None:
        """Take sub-plugin ``name`` out (dependents first) and forget it."""
        record = self.records.get(name)
        if record is None:
            return
        failed = record.state == "active" and not self._deactivate(record, "inactive")
        del self.records[name]
        if failed:
            raise RuntimeError(f"{name}: {record.error}")

    def unregister(self, name: str) -> None:
        """Take plugin object ``name`` out of pluggy (while closing: at the end, all at once)."""
        if self._leaving is not None:
            self._leaving.append(name)
        elif self.pm.get_plugin(name) is not None:
            self.pm.unregister(name=name)

    # -- deactivation ----------------------------------------------------------------------

    def fail(self, name: str, error: str) -> None:
        """Take an active plugin down (dependents first) and leave it ``failed`` with
        ``error``, remembering the tools it offered; a reload, an unblock or ``recover``
        may bring it back."""
        record = self.records.get(name)
        if record is None or record.state != "active":
            return
        lost = list(record.tools)
        if self._deactivate(record, "inactive"):
            record.fail(error)
            record.lost_tools = lost
        self.reconcile()

    def recover(self, name: str) -> None:
        """Activate a plugin that ``fail`` took down again, with the same plugin object."""
        record = self.records.get(name)
        if record is not None and record.state == "failed" and record.obj is not None:
            record.deactivated()
            self.reconcile()

    def block(self, name: str) -> None:
        """Take a plugin out (its dependents first) and keep it out until ``unblock``."""
        record = self.records[name]
        if record.state == "active":
            self._deactivate(record, "blocked")
        elif record.state == "inactive":
            record.block()
        self.reconcile()

    def unblock(self, name: str) -> None:
        """Let a blocked plugin load and activate again (a failed import is retried)."""
        record = self.records[name]
        if record.state != "blocked":
            return
        record.deactivated()
        if record.obj is None:
            try:
                self._load(record)
            except Exception as error:
                record.fail(error)
        self.reconcile()

    def _deactivate(self, record: PluginRecord, state: str) -> bool:
        """Dispose ``record`` (dependents first); False when a disposer failed."""
        errors = self._retire(record)
        if errors is not None:
            record.fail(errors)
            return False
        if state == "blocked":
            record.block()
        else:
            record.deactivated()
        return True

    def _retire(self, record: PluginRecord) -> ExceptionGroup[Exception] | None:
        """Take ``record``'s activation down, dependents first, leaving it ``inactive``.

        Returns (never raises) what its disposers raised: the scope is gone either way.
        """
        provided = set(record.services)
        if provided:
            for other in reversed(list(self.records.values())):
                if (
                    other.state == "active"
                    and other is not record
                    and provided & (set(other.requires) | set(other.uses))
                ):
                    self._deactivate(other, "inactive")
        record.deactivated()  # before disposal, so service withdrawals find it settled
        try:
            self._dispose_scope(record)
        except ExceptionGroup as errors:
            return errors
        return None

    def _dispose_scope(self, record: PluginRecord) -> None:
        scope, record.scope, record.added = record.scope, None, defaultdict(list)
        if scope is not None:
            scope.dispose()

    def _on_service_change(self, name: str, present: bool) -> None:
        self.reconcile()

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Hold activation while the caller rearranges plugins; reconcile once at the end."""
        busy, self._busy = self._busy, True
        try:
            yield
        finally:
            self._busy = busy
        self.reconcile()

    def swap_in(
        self,
        record: PluginRecord,
        staged: PluginRecord,
        staged_as: str,
        adds: Iterable[Callable[[], None]],
    ) -> ExceptionGroup[Exception] | None:
        """Replace ``record``'s activation by that of ``staged`` (a hot reload's new version,
        in pluggy as ``staged_as``) in one step, then make each of ``adds`` (what it registered,
        held until now); returns what the old activation's disposers raised. When adding
        raises, the plugin is left ``failed``."""
        with self.paused():
            retired = self._retire(record)
            record.restore(staged)
            try:
                self.unregister(staged_as)
                if self.pm.get_plugin(record.name) is None:
                    self.pm.register(record.obj, name=record.name)
                for add in adds:
                    add()
            except Exception as error:
                self._retire(record)
                record.fail(error)
            else:
                record.activated()
                self._refresh_dependents(record)
        return retired

    def take_down(self, name: str) -> bool:
        """Deactivate ``name`` (dependents first) to ``inactive``; use inside ``paused()``.

        Returns False when a disposer failed (the record is then ``failed``).
        """
        record = self.records[name]
        if record.state == "active":
            return self._deactivate(record, "inactive")
        if record.state == "failed":
            record.deactivated()
        return True

    def close(self) -> list[DisposalFailure]:
        """Deactivate every plugin, last activated first; returns the disposal failures (each
        of those plugins is left ``failed``), never raises them.

        The deactivated plugins leave pluggy together at the end. pluggy's ``unregister``
        reads every registration of the plugin's hooks, so when they are all that pluggy
        holds, an empty manager replaces it; otherwise they leave first registered first
        (pluggy finds a plugin by scanning its registrations from the oldest).
        """
        failures: list[DisposalFailure] = []
        leaving: list[str] = []
        self._busy, self._leaving = True, leaving
        try:
            for record in reversed(list(self.records.values())):
                if record.state == "active" and not self._deactivate(record, "inactive"):
                    failures.append(DisposalFailure(record.name, record.exception or Exception()))
        finally:
            self._busy, self._leaving = False, None
            self._unsubscribe()
            if set(leaving) >= {name for name, _ in self.pm.list_name_plugin()}:
                self.pm = self._new_hook_manager()
            else:
                for name in reversed(leaving):
                    self.unregister(name)
        return failures
