"""The ``profiles`` service: profiles shipped by plugins, and loading every source on demand.

Loading (``load``) checks the user and project directories each time it is asked (the
delegation tool asks at every start and whenever it describes itself), so a changed file
affects the next start and never a child already running; an unchanged set of files is served
from a cache keyed on the files' metadata. Checking is one ``stat`` per directory and per file
found in it: a directory's entries are listed again (discovered) only when its own metadata
changed, which adding, removing or renaming a file does. This module stays import-light (it is
on the host's start-up path); parsing, and the profile values (``host.profiles.model``), are
imported on first use.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from host.naming import NamedRegistry
    from host.profiles.model import Locations, Profile, ProfileSet
    from host.tools.filter import ToolFilter

HOME_ENV = "AGENT_HOST_HOME"
DIR_NAME = ".agent-host"
CLAUDE_DIR = ".claude"
AGENTS = "agents"
RECENT_NS = 2_000_000_000
"""Metadata changed less than this long ago (ns) is not cached on: a rewrite within the file
system's timestamp granularity could otherwise go unseen."""


class RegisterProfile(Protocol):
    """``register`` of ``register_profiles`` (``host.profiles.hookspecs``): a Markdown profile
    file, a directory of them, or a ``Profile`` value; what ``ProfileLibrary.register`` takes.
    It lives here, not beside that hook, so that ``host.api`` re-exports it without importing
    the hook's module, which imports ``host.api`` back."""

    def __call__(self, source: str | os.PathLike[str] | Profile) -> None: ...


def locations(environ: Mapping[str, str], cwd: Path) -> Locations:
    """User: ``$AGENT_HOST_HOME/agents``, else ``~/.agent-host/agents`` (``HOME``); project:
    ``.agent-host/agents`` under ``cwd``; Claude Code's ``~/.claude/agents`` (always the real
    home, ``HOME``) and ``.claude/agents`` under ``cwd``; the user-level ``agent-host.toml``
    beside our user directory (the file ``[approvals]`` is read from)."""
    from host.approvals.policy import user_config_file
    from host.profiles.model import Locations

    base = environ.get("HOME")
    real_home = Path(base) if base else Path.home()
    home = environ.get(HOME_ENV)
    user = Path(home) / AGENTS if home else real_home / DIR_NAME / AGENTS
    return Locations(
        user=user,
        project=cwd / DIR_NAME / AGENTS,
        claude_user=real_home / CLAUDE_DIR / AGENTS,
        claude_project=cwd / CLAUDE_DIR / AGENTS,
        config=user_config_file(environ),
    )


class _Entry:
    """One registration: the plugin and what it registered (a path or a ``Profile``)."""

    __slots__ = ("plugin", "source")

    def __init__(self, plugin: str, source: Path | Profile) -> None:
        self.plugin = plugin
        self.source = source


class ProfileLibrary:
    """Plugin-registered profile sources plus loading of all four sources.

    ``environ`` and ``cwd`` default to the process's at each load (tests may fix them).
    ``tools`` (the host's global tools) tells which plugin registered a tool a project profile
    names, for the deployment's globs (``host.tools.globs``) to judge it, and which of Claude
    Code's tool names have an equivalent (``host.profiles.claude``).
    """

    def __init__(
        self,
        *,
        environ: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        tools: NamedRegistry[Any] | None = None,
    ) -> None:
        self.environ = environ
        self.cwd = cwd
        self.tools = tools
        self._entries: list[_Entry] = []
        self._generation = 0
        self._cache: dict[Any, tuple[Any, ProfileSet]] = {}
        self._where: tuple[Any, Locations] | None = None
        self._sources: tuple[Any, list[tuple[str, Path | Profile]], list[str]] | None = None
        self._plugins: tuple[Any, dict[str, str | None], tuple[Any, ...]] | None = None
        self._files = ProfileFiles()

    def register(self, plugin: str, source: Any) -> Callable[[], bool]:
        """Add ``source`` for ``plugin``: a path (``str``/``PathLike``) to a Markdown profile or
        a directory of them, or a ``Profile``; returns the disposer that removes it."""
        from host.profiles.model import Profile

        if isinstance(source, Profile):
            value: Path | Profile = source
        elif isinstance(source, str | os.PathLike):
            value = Path(source)
        else:
            raise TypeError(
                f"register_profiles expects a path or host.profiles.Profile, got {source!r}"
            )
        entry = _Entry(plugin, value)
        self._entries.append(entry)
        self._generation += 1

        def dispose() -> bool:
            if entry in self._entries:
                self._entries.remove(entry)
                self._generation += 1
                return True
            return False

        return dispose

    def entries(self) -> list[tuple[str, Path | Profile]]:
        """``(plugin, source)`` in registration order."""
        return [(entry.plugin, entry.source) for entry in self._entries]

    def locations(self) -> Locations:
        """The user and project directories as of now (built again only when the variables
        and the working directory they come from changed)."""
        environ = os.environ if self.environ is None else self.environ
        cwd = os.fspath(self.cwd) if self.cwd is not None else os.getcwd()
        key = (environ.get("HOME"), environ.get(HOME_ENV), cwd)
        if self._where is None or self._where[0] != key:
            self._where = (key, locations(environ, Path(cwd)))
        return self._where[1]

    def load(self, deployment: ToolFilter | None = None) -> ProfileSet:
        """Every profile in effect now; project profiles naming tools ``deployment`` does not
        admit are diagnostics instead (the repository cannot grant itself more). The cache is
        keyed on the metadata of the profile files and of the paths the result depends on
        (``ProfileSet.watched``: memory directories, the user-level configuration)."""
        from host.profiles.sources import load_all

        where = self.locations()
        entries, files = self._paths()
        plugins, tools_key = self._tool_plugins()
        key = (self._where_key(), self._generation, deployment, tools_key)
        signature = self._files.signature
        before, cacheable = signature(files)  # taken first: a change meanwhile shows
        cached = self._cache.get(key)
        if cached is not None and cached[0] == before + _watched(signature, cached[1])[0]:
            return cached[1]
        loaded = load_all(where, entries, deployment, plugins)
        watched, settled = _watched(signature, loaded)
        signature = before + watched
        if cacheable and settled:
            if len(self._cache) > 16:
                self._cache.clear()
            self._cache[key] = (signature, loaded)
        return loaded

    def _where_key(self) -> Any:
        """What the locations were built from (``locations``): equal keys, equal locations."""
        assert self._where is not None
        return self._where[0]

    def _paths(self) -> tuple[list[tuple[str, Path | Profile]], list[str]]:
        """The registrations and the paths to check (the four directories, then the
        registered paths, as strings: each load stats them), built again only when the
        locations or the registrations change."""
        key = (self._where_key(), self._generation)
        if self._sources is None or self._sources[0] != key:
            where = self.locations()
            entries = self.entries()
            paths = [where.user, where.project, where.claude_user, where.claude_project]
            paths += [s for _, s in entries if isinstance(s, Path)]
            texts = [os.fspath(path) for path in paths if path is not None]
            self._sources = (key, entries, texts)
        return self._sources[1], self._sources[2]

    def _tool_plugins(self) -> tuple[dict[str, str | None], tuple[Any, ...]]:
        """Each global tool's name and the plugin that registered it (None: no plugin), and
        the same as a cache key; read again only when the global tools changed."""
        if self.tools is None:
            return {}, ()
        cached, seen = self._plugins, (self.tools, self.tools.version)
        if cached is None or cached[0][0] is not seen[0] or cached[0][1] != seen[1]:
            from host.tools.globs import plugins_by_tool

            plugins = plugins_by_tool(self.tools)
            cached = self._plugins = (seen, plugins, tuple(plugins.items()))
        return cached[1], cached[2]


class ProfileFiles:
    """The metadata of profile paths, each directory's entries listed only when it changed."""

    def __init__(self) -> None:
        self._listed: dict[str, tuple[Any, list[str]]] = {}

    def signature(self, paths: Iterable[Path | str], *, entries: bool = True) -> tuple[Any, bool]:
        """Metadata of ``paths`` and (``entries``) of the entries of those that are
        directories, and whether it is safe to cache on it (nothing modified within
        ``RECENT_NS``)."""
        since = time.time_ns() - RECENT_NS
        parts: list[Any] = []
        settled = True
        for path in paths:
            text = os.fspath(path)
            info, recent = _stat(text, since)
            settled = settled and not recent
            parts.append((text, info))
            if entries and info[0] != "missing" and stat.S_ISDIR(info[4]):
                for name in self._names(text, info, recent):
                    entry, recent = _stat(os.path.join(text, name), since)
                    settled = settled and not recent
                    parts.append((name, entry))
        return tuple(parts), settled

    def _names(self, directory: str, info: Any, recent: bool) -> list[str]:
        """The entries of ``directory`` (metadata ``info``): listed again unless the last
        listing saw the same, settled metadata."""
        listed = self._listed.get(directory)
        if listed is not None and listed[0] == info:
            return listed[1]
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            return []
        if not recent:
            if len(self._listed) > 64:
                self._listed.clear()
            self._listed[directory] = (info, names)
        return names


def _stat(path: str, since: int) -> tuple[Any, bool]:
    """``path``'s metadata (inode, times, size, mode; or why it is missing) and whether it was
    modified after ``since``."""
    try:
        info = os.stat(path)
    except OSError as error:
        return ("missing", error.errno), False
    key = (info.st_ino, info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_mode)
    return key, info.st_mtime_ns > since


def _watched(signature: Callable[..., tuple[Any, bool]], loaded: ProfileSet) -> tuple[Any, bool]:
    """The metadata of the paths ``loaded`` depends on besides the profile files (their own,
    not their entries: a memory directory's files do not matter to loading)."""
    if not loaded.watched:
        return (), True
    return signature(loaded.watched, entries=False)
