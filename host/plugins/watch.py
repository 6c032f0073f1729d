"""What to watch for hot reload, and what a batch of changed files means for the host.

This module knows nothing of the file watcher: ``agent-host dev`` feeds it batches of paths
from ``watchfiles``; the tests feed it batches by hand (an injected change source).

* **Where a plugin's code lives** (``source_roots``): the top-level module or package of its
  entry point, found with ``importlib.util.find_spec`` (which does not import it): a package's
  directories (``submodule_search_locations``) or a single module's file (``origin``). The
  top-level package is the unit because a reload re-imports exactly that package. The built-in
  plugins live in the ``host`` package.
* **In development** (``in_development``): code that is not under an installation directory
  (``site-packages``/``dist-packages``, the standard library). Editable installs (PEP 660
  finders, ``.pth`` files, ``.egg-link``) and ``PYTHONPATH`` checkouts qualify; a regular
  wheel install does not, so nobody reloads code they cannot edit.
* **Deciding** (``WatchMap.plan``): every changed path maps to the plugins whose roots hold it
  (several plugins can share a package: each is named once). If one of them is built in, or
  provides services without handing its state over (``hand_over_state``), or restart mode is
  forced, the decision is a process restart; otherwise the plugins are reloaded in process, in
  load order. A provider that hands its state over is reloaded in place when its new version
  provides the same services and takes the state over (its dependents re-activate against the
  new service in the same swap); else nothing changes and the process restarts. A built-in's
  own module names that built-in; any other file of ``host`` restarts as "host code". A change
  under a ``--watch`` path that belongs to no plugin (a config or data file) restarts too:
  nothing less is sure to pick it up. Paths under the data directory are never changes.
* **Coalescing** (``ReloadLoop``): batches go into one pending set while a reload runs; the
  next round takes all of it, so several quick edits of a plugin make one reload.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib.util
import os
import site
import sys
import sysconfig
from collections.abc import AsyncIterable, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs

from host.plugins.lifecycle import PluginLifecycle, describe_error
from host.plugins.record import PluginRecord
from host.plugins.reload import ReloadOutcome, reload_plugin


def source_roots(record: PluginRecord) -> tuple[Path, ...]:
    """The files/directories holding ``record``'s code, found without importing it."""
    top = record.candidate.package  # for a built-in: host
    if not top:
        return ()  # an object handed over in code: no source to watch
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return ()
    if spec is None:
        return ()
    if spec.submodule_search_locations:
        return tuple(Path(p).resolve() for p in spec.submodule_search_locations)
    if spec.origin and os.path.isfile(spec.origin):
        return (Path(spec.origin).resolve(),)
    return ()


def _installation_dirs() -> tuple[Path, ...]:
    found: set[str] = set()
    for key in ("purelib", "platlib", "stdlib", "platstdlib"):
        with contextlib.suppress(KeyError):
            found.add(sysconfig.get_paths()[key])
    with contextlib.suppress(AttributeError):
        found.update(site.getsitepackages())
    with contextlib.suppress(AttributeError):
        found.add(site.getusersitepackages())
    found.add(sys.base_prefix + "/lib")
    return tuple(Path(p).resolve() for p in found if p)


def in_development(path: Path) -> bool:
    """True for code an author edits in place (not inside an installation directory)."""
    resolved = path.resolve()
    if any(part in ("site-packages", "dist-packages") for part in resolved.parts):
        return False
    return not any(resolved.is_relative_to(d) for d in _installation_dirs())


def provides_services(record: PluginRecord) -> bool:
    """True for plugins reloaded by restarting the process: built-ins, and service providers
    that hand over no state (``hand_over_state``); one that does reloads in place as long as
    its new version provides the same services and takes the state over."""
    if record.candidate.builtin:
        return True
    return bool(record.services) and "hand_over_state" not in record.hooks


@attrs.frozen
class Plan:
    """What one batch of changes calls for: plugins to reload, or a restart with its reason."""

    reload: tuple[str, ...] = ()
    restart: str | None = None

    @property
    def empty(self) -> bool:
        """True when the batch touched nothing we watch."""
        return not self.reload and self.restart is None


class WatchMap:
    """Which plugin owns which watched file, and the decision for a batch of changed paths."""

    def __init__(
        self,
        plugins: PluginLifecycle,
        *,
        extra: Sequence[Path] = (),
        ignore: Sequence[Path] = (),
        restart_always: bool = False,
        development: Callable[[Path], bool] = in_development,
        config_files: Sequence[Path] = (),
    ) -> None:
        self.plugins = plugins
        self.restart_always = restart_always
        self.config_files = tuple(Path(os.path.abspath(p)) for p in config_files)
        self.extra = tuple(Path(p).resolve() for p in extra)
        self.ignore = tuple(Path(p).resolve() for p in ignore)
        self.roots: dict[str, tuple[Path, ...]] = {}
        for name, record in plugins.records.items():
            if record.state == "blocked":
                continue
            roots = tuple(r for r in source_roots(record) if development(r))
            if roots:
                self.roots[name] = roots

    def paths(self) -> list[Path]:
        """What the watcher must watch: every plugin root and extra path, none nested twice.

        A single-module plugin is watched through its directory: editors that save by
        replacing the file would otherwise leave a watch on the old, deleted file.
        """
        roots = (r for rs in self.roots.values() for r in rs)
        every = sorted({*self.extra, *(r if r.is_dir() else r.parent for r in roots)})
        kept: list[Path] = []
        for path in every:
            if not any(path.is_relative_to(k) for k in kept):
                kept.append(path)
        return kept

    def owners(self, path: Path) -> list[str]:
        """The plugins whose code includes ``path``."""
        return [n for n, roots in self.roots.items() if any(path.is_relative_to(r) for r in roots)]

    def plan(self, changed: Iterable[str | Path]) -> Plan:
        """The decision for one (coalesced) batch of changed paths."""
        affected: set[str] = set()
        providers: set[str] = set()
        host_files: list[Path] = []
        strays: list[Path] = []
        for raw in changed:
            path = Path(os.path.abspath(raw))
            if path in self.config_files:  # plugins read it when they activate: start afresh
                return Plan(restart=f"configuration changed ({path.name})")
            if any(path.is_relative_to(i) for i in self.ignore):
                continue
            owners = self.owners(path)
            records = [self.plugins.records[n] for n in owners]
            if any(r.candidate.builtin for r in records):  # the host's own code
                builtin = self._builtin_files().get(path.resolve())
                if builtin:
                    providers.add(builtin)
                else:
                    host_files.append(path)
                owners = [r.name for r in records if not r.candidate.builtin]
            affected.update(owners)
            providers.update(n for n in owners if provides_services(self.plugins.records[n]))
            if not records and any(path.is_relative_to(e) for e in self.extra):
                strays.append(path)
        ordered = tuple(n for n in self.plugins.records if n in affected)
        if providers:
            names = [n for n in self.plugins.records if n in providers]
            verb = "provides" if len(names) == 1 else "provide"
            return Plan(restart=f"{', '.join(names)} {verb} services")
        if host_files:
            return Plan(restart=f"host code changed ({host_files[0].name})")
        if strays:
            return Plan(restart=f"{strays[0].name} changed outside every plugin")
        if ordered and self.restart_always:
            return Plan(restart=f"{', '.join(ordered)} changed (--restart)")
        return Plan(reload=ordered)

    def _builtin_files(self) -> dict[Path, str]:
        """The module file of each built-in plugin (its own code inside ``host``)."""
        found: dict[Path, str] = {}
        for name, record in self.plugins.records.items():
            if record.candidate.builtin:
                with contextlib.suppress(ImportError, ValueError, AttributeError):
                    spec = importlib.util.find_spec(record.candidate.entry_point)
                    if spec is not None and spec.origin:
                        found[Path(spec.origin).resolve()] = name
        return found


class PendingChanges:
    """Changed paths waiting for the next round; batches that arrive meanwhile merge in."""

    def __init__(self) -> None:
        self._paths: set[str] = set()
        self._ready = asyncio.Event()

    def add(self, batch: Iterable[str | Path]) -> None:
        """Merge one batch into the pending set."""
        self._paths.update(str(p) for p in batch)
        if self._paths:
            self._ready.set()

    async def take(self) -> set[str]:
        """Wait until something is pending, then take all of it."""
        await self._ready.wait()
        return self.take_now()

    def take_now(self) -> set[str]:
        """Take whatever is pending (possibly nothing) without waiting."""
        taken, self._paths = self._paths, set()
        self._ready.clear()
        return taken


Reload = Callable[..., ReloadOutcome]
"""``reload(name)``, and ``reload(name, keep_services=True)`` for a provider."""
Emit = Callable[[str], None]


class ReloadLoop:
    """Consumes a change source; reloads the affected plugins once per round, or stops to restart.

    ``source`` yields batches of paths (``watchfiles.awatch`` in ``agent-host dev``, anything
    in tests). ``emit`` prints a line. Each plugin is reloaded by ``reload_plugin`` on the
    watch map's plugins (what ``Host.reload`` does), or by ``reload`` when given (tests). A
    restart decision ends ``run`` with its reason: the caller shuts the host down and
    re-executes the process.
    """

    def __init__(self, watch_map: WatchMap, emit: Emit, reload: Reload | None = None) -> None:
        self.watch_map = watch_map
        self.reload: Reload = reload or functools.partial(reload_plugin, watch_map.plugins)
        self.emit = emit
        self.pending = PendingChanges()
        self.rounds: list[Plan] = []

    async def run(self, source: AsyncIterable[Iterable[str | Path]]) -> str | None:
        """Run until the source ends (None) or a restart is decided (its reason)."""
        pump = asyncio.ensure_future(self._pump(source))
        try:
            while True:
                if pump.done():
                    changed = self.pending.take_now()
                    if not changed:
                        pump.result()  # a failed watcher raises here
                        return None
                else:
                    waiter = asyncio.ensure_future(self.pending.take())
                    await asyncio.wait({pump, waiter}, return_when=asyncio.FIRST_COMPLETED)
                    if not waiter.done():
                        await cancel_task(waiter)
                        continue
                    changed = waiter.result()
                reason = self.step(changed)
                if reason is not None:
                    return reason
                await asyncio.sleep(0)  # batches that arrived during the reloads merge first
        finally:
            await cancel_task(pump)

    async def _pump(self, source: AsyncIterable[Iterable[str | Path]]) -> None:
        async for batch in source:
            self.pending.add(batch)

    def step(self, changed: Iterable[str | Path]) -> str | None:
        """Act on one coalesced round; returns the restart reason when one was decided."""
        plan = self.watch_map.plan(changed)
        if plan.empty:
            return None
        self.rounds.append(plan)
        if plan.restart is not None:
            self.emit(f"restarting: {plan.restart}")
            return plan.restart
        for name in plan.reload:
            providing = bool(self.watch_map.plugins.records[name].services)
            try:  # a provider goes in place only with its services and state kept
                outcome = self.reload(name, keep_services=True) if providing else self.reload(name)
            except Exception as error:  # a bug in the host, not in the plugin: keep watching
                self.emit(f"reload of {name} failed: {describe_error(error)}")
                continue
            self.emit(outcome.line())
            if outcome.restart is not None:
                return outcome.restart
        return None


async def cancel_task(task: asyncio.Future[Any]) -> None:
    """Cancel ``task`` unless it is done, and wait until it is."""
    if not task.done():
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
