"""Where a profile's memory lives, and whether it may keep one there.

A profile with ``memory: user | project | local`` keeps it in
``Locations.memory_directory(scope, name)``. Every profile with a memory is checked when
profiles are loaded:

* a project-level profile (ours or Claude Code's) may use ``project`` or ``local`` only when
  the user-level ``agent-host.toml`` allows it (``[profiles] project_profile_memory = true``;
  the project's own ``agent-host.toml`` cannot), since its children would write into the
  repository;
* the directory, or the nearest existing folder it would be created in, must be a writable
  directory, and an existing ``MEMORY.md`` a regular, readable file; a project or local
  memory directory must not be reached through a symbolic link in the project
  (``.agent-host``, its memory folder, the directory itself).

A failed check is one diagnostic naming the file and the profile; that profile is not loaded
(the others are). A ``MEMORY.md`` larger than the head a child is shown is a note (the profile
loads). The directory itself is created by the first memory write.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import attrs

from host.errors import ConfigError
from host.memory.store import INDEX, INDEX_BYTES, INDEX_LINES, linked, repository_links
from host.profiles.model import PROJECT_SOURCES, Diagnostic, Locations, Profile, shown

TABLE = "profiles"
ALLOW_KEY = "project_profile_memory"


class ProjectMemory:
    """Whether the user-level configuration ``config`` lets project-level profiles keep
    memory in the project; the file is read once, when first asked."""

    def __init__(self, config: Path | None) -> None:
        self.config = config
        self._refusal: str | None = None
        self._asked = False

    def refusal(self) -> str | None:
        """None when allowed, else why not (one line)."""
        if not self._asked:
            self._asked = True
            self._refusal = self._judge()
        return self._refusal

    def _judge(self) -> str | None:
        from host.plugins.config import read_config_file

        where = shown(self.config) if self.config is not None else "the user configuration"
        try:
            table: Any = read_config_file(self.config, explicit=False).get(TABLE)
        except ConfigError as error:
            return f"{error.message}; project memory stays off"
        allowed = table.get(ALLOW_KEY, False) if isinstance(table, dict) else None
        if table is not None and not isinstance(allowed, bool):
            return f"{where}: [{TABLE}] {ALLOW_KEY} must be true or false"
        if allowed is not True:
            return (
                "a project profile may keep project or local memory only if the user allows "
                f"it: set [{TABLE}] {ALLOW_KEY} = true in {where}"
            )
        return None


def attach(profile: Profile, where: Locations, project: ProjectMemory) -> Profile | Diagnostic:
    """``profile`` with its memory directory set, or the diagnostic saying why it cannot keep
    a memory (module docstring); a profile without memory is returned as it is."""
    if profile.memory is None:
        return profile
    if profile.source in PROJECT_SOURCES and profile.memory != "user":
        refusal = project.refusal()
        if refusal is not None:
            return _diagnostic(profile, refusal)
    directory = where.memory_directory(profile.memory, profile.name)
    problem = directory_problem(directory, profile.memory)
    if problem is not None:
        return _diagnostic(profile, problem)
    return attrs.evolve(profile, memory_dir=str(directory.absolute()))


def directory_problem(directory: Path, scope: str) -> str | None:
    """Why memory of ``scope`` cannot be kept in ``directory`` (created on first write), or
    None."""
    link = linked(repository_links(directory, scope))
    if link is not None:
        return f"{shown(link)} is a symbolic link; {scope} memory is not kept through links"
    existing = directory
    while not os.path.lexists(existing) and existing.parent != existing:
        existing = existing.parent
    if not existing.is_dir():
        what = "memory directory" if existing == directory else "folder"
        return f"{what} {shown(existing)} is not a directory"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"{shown(existing)} is not writable"
    index = directory / INDEX
    if existing == directory and os.path.lexists(index):
        if not index.is_file():
            return f"{shown(index)} is not a regular file"
        if not os.access(index, os.R_OK):
            return f"{shown(index)} cannot be read"
    return None


def index_note(profile: Profile) -> Diagnostic | None:
    """A note (the profile still loads) when the ``MEMORY.md`` of ``profile``'s memory is
    larger than the head its children are shown, or None."""
    if profile.memory_dir is None:
        return None
    try:
        size = (Path(profile.memory_dir) / INDEX).stat().st_size
    except OSError:
        return None
    if size <= INDEX_BYTES:
        return None
    problem = (
        f"{INDEX} is {size} bytes; its children are shown only its first {INDEX_LINES} lines "
        f"(at most {INDEX_BYTES} bytes)"
    )
    return _diagnostic(profile, problem, skipped=False)


def _diagnostic(profile: Profile, problem: str, *, skipped: bool = True) -> Diagnostic:
    return Diagnostic(
        profile.origin,
        f'profile "{profile.name}": {problem}',
        field="memory",
        source=profile.source,
        skipped=skipped,
    )
