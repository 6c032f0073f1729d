"""Hot reload of one plugin, atomically: the new code is imported first, the old kept on failure.

1. The plugin's own modules (its entry point's top-level package) are taken out of
   ``sys.modules``, import caches are invalidated, and the entry point is loaded again.
2. Only if that import succeeds is the old activation disposed (dependents first), the new
   object adopted and activated; dependents re-activate after it.
3. If the new code fails to import or to activate, the previous object and modules are put
   back exactly as they were and re-activated: the host never ends up with neither.

Tool calls already running finish on the old code (they hold the old objects).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import time
from types import ModuleType

import attrs

from host.plugins.lifecycle import PluginManager, describe_error
from host.plugins.record import PluginRecord


@attrs.frozen
class ReloadOutcome:
    """What a reload did: ``ok`` with the time it took, or the error and the old version kept."""

    plugin: str
    ok: bool
    seconds: float
    state: str
    error: str | None = None

    def line(self) -> str:
        """The one line ``agent-host dev`` prints."""
        if self.ok:
            return f"reloaded {self.plugin} in {self.seconds * 1000:.0f} ms"
        return f"reload of {self.plugin} failed, previous version kept: {self.error}"


def plugin_package(record: PluginRecord) -> str | None:
    """The top-level package that holds the plugin's code (None for objects given in code and
    for sub-plugins, whose ``load`` is simply called again)."""
    if record.candidate.parent is not None:
        return None
    module = record.candidate.entry_point.split(":")[0].strip()
    if record.candidate.builtin:
        return module  # host.builtins.<name>: never the whole host package
    if record.candidate.distribution is None or not module:
        return None  # an object handed over in code: nothing to re-import
    return module.split(".")[0]


def _take_modules(package: str | None) -> dict[str, ModuleType]:
    if package is None:
        return {}
    taken = {
        name: module
        for name, module in list(sys.modules.items())
        if name == package or name.startswith(package + ".")
    }
    for name, module in taken.items():
        del sys.modules[name]
        _drop_bytecode(module)
    importlib.invalidate_caches()
    return taken


def _drop_bytecode(module: ModuleType) -> None:
    """Remove a module's cached bytecode: a pyc records the source's mtime in whole seconds
    and its size, so an edit within the same second that keeps the size would be missed."""
    cached = getattr(module, "__cached__", None)
    if isinstance(cached, str):
        with contextlib.suppress(OSError):
            os.unlink(cached)


def _restore_modules(package: str | None, saved: dict[str, ModuleType]) -> None:
    _take_modules(package)
    sys.modules.update(saved)


def reload_plugin(manager: PluginManager, name: str) -> ReloadOutcome:
    """Reload ``name`` in process; see the module docstring for the guarantees."""
    started = time.perf_counter()
    record = manager.records[name]
    if record.state == "blocked":
        return ReloadOutcome(name, False, 0.0, record.state, "the plugin is blocked")
    package = plugin_package(record)
    saved = _take_modules(package)
    old = (record.obj, record.requires, record.uses, record.config, record.hooks)
    try:
        fresh = record.candidate.load()
    except Exception as error:
        _restore_modules(package, saved)
        return _failed(record, started, describe_error(error))
    rejected: str | None = None
    with manager.paused():
        manager.take_down(name)
        try:
            manager.adopt(record, fresh)
        except Exception as error:  # the old object stays; paused() re-activates it
            _restore_modules(package, saved)
            rejected = describe_error(error)
    if rejected is not None:
        return _failed(record, started, rejected)
    if record.state != "failed":
        return ReloadOutcome(name, True, time.perf_counter() - started, record.state)
    error_text = record.error or "activation failed"
    with manager.paused():
        _restore_modules(package, saved)
        record.obj, record.requires, record.uses, record.config, record.hooks = old
        record.state, record.error = "inactive", None
    return _failed(record, started, error_text)


def _failed(record: PluginRecord, started: float, error: str) -> ReloadOutcome:
    return ReloadOutcome(record.name, False, time.perf_counter() - started, record.state, error)
