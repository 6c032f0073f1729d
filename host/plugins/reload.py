"""Hot reload of one plugin, atomically: the new version is imported and activated beside the
running one, then swapped in at once; any failure leaves the running version untouched.

1. The plugin's own modules (its entry point's top-level package; a built-in's own module) are
   taken out of ``sys.modules``, import caches invalidated, and the entry point loaded again (a
   sub-plugin's ``load`` is simply called again).
2. If the running version implements ``hand_over_state``, it returns the state its successor
   starts from (``take_over_state``, called first on the new version). With ``keep_services``
   whether a restart is due is decided before that hand-over (``_same_services``).
3. The new version activates into a staging layer (``host.plugins.staging``): its hooks run and
   what they register is checked and held, while the old version keeps serving every call.
4. The swap, in one synchronous step: the old version's dependents go down, its scope is
   disposed, the new registrations go in, dependents come back (a replaced service restarts
   the plugins that require or use it, as any activation does). Tools and prompt sections are
   never missing in between. A disposer of the old version that raises does not stop the swap:
   the old scope is abandoned and its error is reported once, in the outcome's line.
5. If the import, the adoption (``requires``, configuration), ``hand_over_state`` or any hook
   of the new version raises, everything the new version did is undone, its modules are put
   back, and the old activation is untouched: never disposed, never re-created, its state kept.

Tool calls already running finish on the old code (they hold the old ``Tool`` objects); the old
scope is disposed at the swap, without waiting for them. A plugin that is not active (inactive,
failed) has no running version to keep: its new object is adopted and activated as usual, and
on failure the previous object is kept for the next activation.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import time
from types import ModuleType
from typing import Any

import attrs

from host.plugins.lifecycle import PluginLifecycle, describe_error
from host.plugins.record import PluginRecord
from host.plugins.staging import NOTHING, Stage


@attrs.frozen
class ReloadOutcome:
    """What a reload did: ``ok`` with the time it took, or the error and whether the previous
    version was ``kept``; ``disposal`` is what the old version's disposers raised at a swap
    that went ahead anyway."""

    plugin: str
    ok: bool
    seconds: float
    state: str
    error: str | None = None
    disposal: str | None = None
    kept: bool = True
    restart: str | None = None
    """Why only a restart can bring the new version in (``keep_services``): decided before
    the running version handed anything over, so nothing changed, its state included."""
    dependents: tuple[tuple[str, str], ...] = ()
    """``(name, error)`` of each plugin that failed to come back up after the swap."""

    def line(self) -> str:
        """The one line ``agent-host dev`` prints."""
        if self.restart is not None:
            return f"restarting: {self.restart}"
        if self.ok:
            done = f"reloaded {self.plugin} in {self.seconds * 1000:.0f} ms"
            if self.disposal is not None:
                done += f"; disposing the previous version failed: {self.disposal}"
            for other, error in self.dependents:
                done += f"; {other} failed to re-activate: {error}"
            return done
        if self.kept:
            return f"reload of {self.plugin} failed, previous version kept: {self.error}"
        return f"reload of {self.plugin} failed: {self.error}"


def plugin_package(record: PluginRecord) -> str | None:
    """The top-level package that holds the plugin's code (None for objects given in code and
    for sub-plugins, whose ``load`` is simply called again)."""
    if record.candidate.parent is not None:
        return None
    if record.candidate.builtin:
        return record.candidate.module  # host.builtins.<name>: never the whole host package
    return record.candidate.package


def _take_modules(package: str | None) -> dict[str, ModuleType]:
    """Take ``package``'s modules out of ``sys.modules`` and remove their cached bytecode: a
    pyc records the source's mtime in whole seconds and its size, so an edit within the same
    second that keeps the size would be missed."""
    if package is None:
        return {}
    taken = {
        name: module
        for name, module in list(sys.modules.items())
        if name == package or name.startswith(package + ".")
    }
    for name, module in taken.items():
        del sys.modules[name]
        cached = getattr(module, "__cached__", None)
        if isinstance(cached, str):
            with contextlib.suppress(OSError):
                os.unlink(cached)
    importlib.invalidate_caches()
    return taken


def _restore_modules(package: str | None, saved: dict[str, ModuleType]) -> None:
    _take_modules(package)
    sys.modules.update(saved)


class ServicesChanged(Exception):
    """The staged version of a service provider cannot replace the running one in place."""


def reload_plugin(
    lifecycle: PluginLifecycle, name: str, *, keep_services: bool = False
) -> ReloadOutcome:
    """Reload ``name`` in process; see the module docstring for the guarantees.

    ``keep_services`` (``agent-host dev``, for a plugin that provides services): the new
    version is swapped in only if it provides the same service names and takes over the
    state the old one hands over; otherwise nothing changes and the outcome's ``restart``
    says why a restart is due.
    """
    started = time.perf_counter()
    record = lifecycle.records[name]
    if record.state == "blocked":
        return ReloadOutcome(name, False, 0.0, record.state, "the plugin is blocked")
    package = plugin_package(record)
    saved = _take_modules(package)
    try:
        fresh = record.candidate.load()
        stage = Stage(lifecycle, record, fresh)
    except Exception as error:
        _restore_modules(package, saved)
        return _failed(record, started, record.explain(error))
    missing = stage.shadow.missing(set(lifecycle.services.names()))  # of the new version
    if record.state == "active" and missing:  # the new version could not activate: keep this one
        error_text: str | None = "the new version requires " + ", ".join(missing)
    elif record.state != "active":
        error_text = _replace(lifecycle, record, fresh)
    else:
        failed_before = _failed_plugins(lifecycle)
        try:
            error_text, disposal = _swap(stage, keep_services)
        except ServicesChanged as changed:
            _restore_modules(package, saved)
            outcome = _failed(record, started, str(changed))
            return attrs.evolve(outcome, restart=str(changed))
        if error_text is None:
            seconds = time.perf_counter() - started
            kept = stage.record.state != "failed"  # or the swap refused a registration
            dependents = _newly_failed(lifecycle, failed_before | {name})
            return ReloadOutcome(
                name, kept, seconds, record.state, record.error, disposal, kept, None, dependents
            )
    if error_text is not None:
        _restore_modules(package, saved)
        return _failed(record, started, error_text)
    return ReloadOutcome(name, True, time.perf_counter() - started, record.state)


def _swap(stage: Stage, keep_services: bool) -> tuple[str | None, str | None]:
    """Stage the new version (with the old one's state) and swap it in: (the error that kept
    the old version, None) or (None, what the old version's disposers raised).
    ``ServicesChanged`` (``keep_services``) when it may not go in without a restart, raised
    before the old version hands anything over."""
    record, state = stage.record, NOTHING
    try:
        if keep_services:
            _same_services(stage)
        if "hand_over_state" in record.hooks:
            state = stage.lifecycle.hand_over(record)
        stage.run(state)
    except ServicesChanged:
        raise
    except Exception as error:
        return record.explain(error, stage.shadow.obj), None
    if record.handle is not None:
        record.handle.handed_over = state is not NOTHING and state is not None
    retired = stage.swap()
    return None, describe_error(retired) if retired is not None else None


def _same_services(stage: Stage) -> None:
    """``ServicesChanged`` unless the staged version provides the running one's services and
    (when there are any) takes over its state. Its names come from a rehearsal: the new
    version's ``register_services`` alone, with no state taken over (as on a cold start), in
    a stage abandoned at once; the running version and its state are not touched."""
    record = stage.record
    if record.services and "take_over_state" not in stage.shadow.hooks:
        raise ServicesChanged(f"{record.name} provides services and takes over no state")
    rehearsal = Stage(stage.lifecycle, record, stage.shadow.obj)
    rehearsal.run(only="register_services")
    old, new = set(record.services), rehearsal.provided()
    rehearsal.abandon()
    if old != new:
        now = ", ".join(sorted(new)) or "no service"
        was = ", ".join(sorted(old)) or "no service"
        raise ServicesChanged(f"{record.name} now provides {now} (was {was})")


def _replace(lifecycle: PluginLifecycle, record: PluginRecord, fresh: Any) -> str | None:
    """A plugin that is not active: adopt ``fresh`` and activate it when it can; on failure
    the previous object is put back (it activates again if it can). Returns the error."""
    old = record.snapshot()
    with lifecycle.paused():
        if not lifecycle.take_down(record.name):  # its disposer raised: abandon that scope
            record.deactivated()
        lifecycle.adopt(record, fresh)  # checked by the stage already: cannot raise
    if record.state != "failed":
        return None
    error_text = record.error or "activation failed"
    with lifecycle.paused():
        record.restore(old)
        record.deactivated()
    return error_text


def _failed_plugins(lifecycle: PluginLifecycle) -> set[str]:
    return {name for name, record in lifecycle.records.items() if record.state == "failed"}


def _newly_failed(lifecycle: PluginLifecycle, before: set[str]) -> tuple[tuple[str, str], ...]:
    """``(name, error)`` of the plugins failed now that were not in ``before``."""
    return tuple(
        (other, lifecycle.records[other].error or "activation failed")
        for other in sorted(_failed_plugins(lifecycle) - before)
    )


def _failed(record: PluginRecord, started: float, error: str) -> ReloadOutcome:
    return ReloadOutcome(record.name, False, time.perf_counter() - started, record.state, error)
