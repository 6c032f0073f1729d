"""The values of the profiles feature: a profile, a diagnostic, a loaded set of profiles, and
where user and project profiles (and Claude Code's agent files) live."""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import attrs

from host.errors import HostError

if TYPE_CHECKING:  # the descriptor format owns the scopes; its module loads with a child
    from host.subagents.descriptors import MemoryScope

Source = Literal["built-in", "user", "project", "plugin", "claude-user", "claude-project"]
PROJECT_SOURCES: tuple[Source, ...] = ("project", "claude-project")
"""Sources the repository controls: they may not grant themselves more than the user allows."""


@attrs.frozen
class Locations:
    """Where user-level and project-level profiles live (``user`` and ``project``: our
    ``agents`` directories), Claude Code's agent directories (None: not read) and the
    user-level ``agent-host.toml`` (None: none).

    The memory of a profile lives beside our directories: ``agent-memory/<name>`` next to
    ``user`` (scope ``user``), ``agent-memory/<name>`` and ``agent-memory-local/<name>``
    next to ``project`` (scopes ``project`` and ``local``)."""

    user: Path
    project: Path
    claude_user: Path | None = None
    claude_project: Path | None = None
    config: Path | None = None

    def memory_directory(self, scope: MemoryScope, name: str) -> Path:
        """The memory directory of the profile ``name`` for ``scope``."""
        if scope == "user":
            return self.user.parent / "agent-memory" / name
        folder = "agent-memory" if scope == "project" else "agent-memory-local"
        return self.project.parent / folder / name


@attrs.frozen
class Profile:
    """One subagent profile, as loaded: what a child started from it gets.

    ``name`` is the canonical name (``<plugin>:<name>`` for a plugin's profile). ``tools`` is
    the allow-list over the parent's global tools (None: all of them), ``disallowed_tools``
    the deny-list, both tool globs (``host.tools.globs``); ``persona`` is the Markdown body
    (the child's persona prompt section). ``model`` None means the default model;
    ``max_steps`` and ``background`` None mean the delegation tool's defaults.
    ``mcp_servers`` limits the MCP tools to those of the servers named (None: no limit; every
    one must be connected when a child starts). ``memory`` is the scope of its persistent
    memory and ``memory_dir`` the directory (set when the profile is loaded, its checks
    passed). ``path`` is the file it came from (None for built-ins). ``closings`` (built-ins
    only) is the advice ``persona_for`` ends the persona with, by the child's mode and tools.
    """

    name: str
    description: str
    source: Source
    persona: str | None = None
    tools: tuple[str, ...] | None = None
    disallowed_tools: tuple[str, ...] = ()
    model: str | None = None
    max_steps: int | None = None
    background: bool | None = None
    mcp_servers: tuple[str, ...] | None = None
    memory: MemoryScope | None = None
    memory_dir: str | None = None
    path: str | None = None
    plugin: str | None = None
    closings: tuple[str, str, str] | None = None

    def persona_for(self, continuable: bool, reporting: bool) -> str | None:
        """The persona a child gets: for a built-in, followed by the closing advice for its
        mode (``closings``: one-shot, continuable with the ``report`` tool, continuable
        without it), so it never contradicts the tools the child has; any other profile's
        persona as written. ``reporting``: whether a continuable child gets ``report``."""
        if self.closings is None or self.persona is None:
            return self.persona
        closing = self.closings[0 if not continuable else 1 if reporting else 2]
        return f"{self.persona} {closing}"

    @property
    def bare_name(self) -> str:
        """The name without the ``<plugin>:`` prefix."""
        return self.name.split(":", 1)[1] if self.plugin is not None else self.name

    @property
    def origin(self) -> str:
        """Where it came from, for messages: its file, else its source."""
        return self.path or self.source


def shown(path: Path | str) -> str:
    """A path for a one-line message: control and format characters escaped."""
    return "".join(
        f"\\x{ord(c):02x}" if unicodedata.category(c) in ("Cc", "Cf") else c for c in str(path)
    )


@attrs.frozen
class Diagnostic:
    """A problem with one profile file: ``<path>: <field>: <problem>``. ``skipped``: the
    profile was not loaded (else the profile loaded and this is a note on it)."""

    path: str
    problem: str
    field: str | None = None
    source: Source | None = None
    skipped: bool = True

    def __str__(self) -> str:
        where = f"{self.path}: {self.field}" if self.field else self.path
        return f"{where}: {self.problem}"


@attrs.frozen
class Shadowed:
    """A profile hidden by a later source's profile of the same name."""

    name: str
    source: Source
    path: str | None
    by: Source


DEFAULT_PROFILE = "general-purpose"
"""The profile a delegation without ``subagent_type`` starts from, when it is in effect."""
EXPLORE_PROFILE = "Explore"
"""The built-in read-only research profile."""


@attrs.frozen
class ProfileSet:
    """The profiles in effect (sorted by name), bare aliases of plugin profiles, diagnostics;
    ``watched``: paths besides the profile files that the result depends on (memory
    directories, the user-level configuration)."""

    profiles: tuple[Profile, ...] = ()
    aliases: tuple[tuple[str, str], ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    shadowed: tuple[Shadowed, ...] = ()
    watched: tuple[str, ...] = ()

    def get(self, name: str) -> Profile | None:
        """The profile with canonical name ``name`` exactly, or None."""
        for profile in self.profiles:
            if profile.name == name:
                return profile
        return None

    def default(self) -> Profile | None:
        """The profile used when ``subagent_type`` is omitted (``DEFAULT_PROFILE``), if any."""
        return self.get(DEFAULT_PROFILE)

    def names(self) -> list[str]:
        """Canonical names in listing order."""
        return [profile.name for profile in self.profiles]

    def aliases_of(self, name: str) -> list[str]:
        """The bare aliases that resolve to canonical ``name``."""
        return [alias for alias, target in self.aliases if target == name]


class ProfileError(HostError):
    """A ``subagent_type`` that names no profile (``UNKNOWN_PROFILE``) or several
    (``AMBIGUOUS_PROFILE``); the message lists what exists or the candidates."""
