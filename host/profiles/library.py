"""The ``profiles`` service: profiles shipped by plugins, and loading every source on demand.

Loading (``load``) re-reads the user and project directories each time it is asked (the
delegation tool asks at every start and whenever it describes itself), so a changed file
affects the next start and never a child already running; an unchanged set of files is served
from a cache keyed on the files' metadata. This module stays import-light (it is on the host's
start-up path); parsing, and the profile values (``host.profiles.model``), are imported on
first use.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from host.naming import NamedRegistry
    from host.profiles.model import Locations, Profile, ProfileSet
    from host.subagents.descriptors import ToolFilterSpec

HOME_ENV = "AGENT_HOST_HOME"
DIR_NAME = ".agent-host"
CLAUDE_DIR = ".claude"
AGENTS = "agents"


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
        """The user and project directories as of now."""
        environ = os.environ if self.environ is None else self.environ
        return locations(environ, self.cwd if self.cwd is not None else Path.cwd())

    def load(self, deployment: ToolFilterSpec | None = None) -> ProfileSet:
        """Every profile in effect now; project profiles naming tools ``deployment`` does not
        admit are diagnostics instead (the repository cannot grant itself more). The cache is
        keyed on the metadata of the profile files and of the paths the result depends on
        (``ProfileSet.watched``: memory directories, the user-level configuration)."""
        from host.profiles.sources import file_signature, load_all

        where = self.locations()
        entries = self.entries()
        paths = [where.user, where.project, where.claude_user, where.claude_project]
        paths += [s for _, s in entries if isinstance(s, Path)]
        files = [path for path in paths if path is not None]
        plugins = self._tool_plugins()
        key = (where, self._generation, _filter_key(deployment), tuple(plugins.items()))
        before, cacheable = file_signature(files)  # taken first: a change meanwhile shows
        cached = self._cache.get(key)
        if cached is not None and cached[0] == before + _watched(cached[1])[0]:
            return cached[1]
        loaded = load_all(where, entries, deployment, plugins)
        watched, settled = _watched(loaded)
        signature = before + watched
        if cacheable and settled:
            if len(self._cache) > 16:
                self._cache.clear()
            self._cache[key] = (signature, loaded)
        return loaded

    def _tool_plugins(self) -> dict[str, str | None]:
        """Each global tool's name and the plugin that registered it (None: no plugin)."""
        if self.tools is None:
            return {}
        from host.tools.globs import plugins_by_tool

        return plugins_by_tool(self.tools)


def _watched(loaded: ProfileSet) -> tuple[Any, bool]:
    """The metadata of the paths ``loaded`` depends on besides the profile files (their own,
    not their entries: a memory directory's files do not matter to loading)."""
    from host.profiles.sources import file_signature

    return file_signature([Path(path) for path in loaded.watched], entries=False)


def _filter_key(spec: ToolFilterSpec | None) -> Any:
    if spec is None:
        return None
    allow = tuple(spec.allow) if spec.allow is not None else None
    limits = tuple((limit.parent, tuple(limit.names)) for limit in spec.sub_plugins or ())
    also = tuple(tuple(globs) for globs in spec.also_allow or ())
    return (allow, tuple(spec.deny or ()), limits, also)
