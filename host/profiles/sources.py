"""Reading the sources of profiles and merging them (later sources override by name).

Order: built-in (``general-purpose``, ``Explore``), user-level, project-level, Claude Code's
user-level (``~/.claude/agents``) and project-level (``.claude/agents``) agent files, then
plugins. A Claude Code file never overrides a profile of our own user or project files (a
diagnostic says so). A plugin's profiles are named ``<plugin>:<name>`` and so never override
anything; each is also reachable by its bare name when no other profile has that name. Within
one directory the files are read in name order: a second file defining a name already defined
there is a diagnostic (the first stays). Only ``*.md`` / ``*.markdown`` entries directly in the
directory are read; hidden files are ignored. A file that is not a regular file (a directory, a
device, a FIFO: ``host.project_files``), unreadable, larger than ``MAX_FILE_BYTES``, not UTF-8
or malformed is one diagnostic; the rest load. A project-level profile (ours or Claude Code's)
may not name tools the deployment denies, and a profile's memory is checked
(``host.profiles.memory``): either failure is a diagnostic and the profile is not loaded.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Collection, Mapping
from pathlib import Path

import attrs

from host.memory.store import INDEX
from host.profiles.memory import ProjectMemory, attach, index_note
from host.profiles.model import (
    EXPLORE_PROFILE,
    PROJECT_SOURCES,
    Diagnostic,
    Locations,
    Profile,
    ProfileSet,
    Shadowed,
    Source,
    shown,
)
from host.profiles.parsing import Invalid, check_name, parse_profile
from host.project_files import FileRefused, read_regular
from host.tools.filter import ToolFilter
from host.tools.globs import matches

SUFFIXES = (".md", ".markdown")
MAX_FILE_BYTES = 256 * 1024
CLAUDE_SOURCES: tuple[Source, ...] = ("claude-user", "claude-project")
OUR_FILES: tuple[Source, ...] = ("user", "project")
_MISSING = f"cannot be read: {os.strerror(errno.ENOENT)}"

GENERAL_PURPOSE_PERSONA = (
    "You are a general-purpose subagent: another agent delegated a task to you. Do the whole "
    "task, step by step, using the tools you have, but nothing beyond it. When you are done, "
    "end with a complete, concise final report: what you did, what you found (with the exact "
    "names, paths and figures the delegating agent needs), and anything you could not do."
)

EXPLORE_PERSONA = (
    "You are read-only: never create, change, move or delete a file, and never run a "
    "command; you have no tool for it, so do not try or offer to. You are a file-search and "
    "codebase-research subagent: another agent delegated a question about the files in front "
    "of you. Find files by name with list_files (glob patterns), search their contents with "
    "grep (regular expressions), and read what matters with read_file; search broadly first, "
    "then narrow down, and follow each lead until you can answer. When you are done, end "
    "with a concise report: the answer, the exact paths and line numbers (path:line) it rests "
    "on with the key lines quoted, and what you looked for and did not find."
)

CLOSINGS = (
    "That final message is your answer: it is all the delegating agent sees of your work.",
    "You run in the background: deliver that report to the delegating agent with the report "
    "tool before you finish (earlier too, when a finding changes what it should do next). "
    "Your closing message also reaches it, in the notice that you finished.",
    "You run in the background: your closing message is what reaches the delegating agent, "
    "in the notice that you finished, so make that report complete.",
)
"""The built-in personas' closing advice: for a one-shot child, for a continuable one that has
the ``report`` tool, and for a continuable one without it (no ``subagent_report`` plugin)."""

EXPLORE_TOOLS = ("read_file", "list_files", "grep", "mcp.fetch")
"""The workspace's read tools (agent-host-workspace) and the tools of the MCP server named
``fetch``, when the user has connected one; never a tool that writes or runs commands."""

GENERAL_PURPOSE = Profile(
    name="general-purpose",
    description=(
        "General-purpose agent for researching questions and carrying out multi-step tasks; "
        "has all of your tools."
    ),
    source="built-in",
    persona=GENERAL_PURPOSE_PERSONA,
    closings=CLOSINGS,
)

EXPLORE = Profile(
    name=EXPLORE_PROFILE,
    description=(
        "Read-only agent for searching files and researching a codebase: finds files, "
        "searches their contents and reads them, and reports exact paths and lines; it "
        "cannot change anything."
    ),
    source="built-in",
    persona=EXPLORE_PERSONA,
    tools=EXPLORE_TOOLS,
    closings=CLOSINGS,
)


def builtin_profiles() -> list[Profile]:
    """The profiles every host has."""
    return [GENERAL_PURPOSE, EXPLORE]


def read_file(
    path: Path, source: Source, plugin: str | None, tools: Collection[str] = ()
) -> tuple[Profile | None, list[Diagnostic]]:
    """One profile file, parsed (a Claude Code file as Claude Code reads it, its tool names
    mapped onto ``tools``, the host's global tools); every failure is a diagnostic naming the
    file."""
    where = shown(path)
    try:
        data = read_regular(path, MAX_FILE_BYTES)
    except FileRefused as refused:
        return None, [Diagnostic(where, refused.reason, source=source)]
    if data is None:  # listed a moment ago: a dangling link, or deleted since
        return None, [Diagnostic(where, _MISSING, source=source)]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, [Diagnostic(where, "is not UTF-8 text", source=source)]
    if source in CLAUDE_SOURCES:
        from host.profiles.claude import parse_claude

        return parse_claude(text, path=where, source=source, tools=tools)
    result = parse_profile(text, path=where, source=source, plugin=plugin)
    return (None, [result]) if isinstance(result, Diagnostic) else (result, [])


def read_directory(
    directory: Path, source: Source, plugin: str | None = None, tools: Collection[str] = ()
) -> tuple[list[Profile], list[Diagnostic]]:
    """The profiles of one directory (missing: none) and the diagnostics of its bad files
    (``tools``: as for ``read_file``)."""
    try:
        if not directory.exists():
            return [], []
        if not directory.is_dir():
            return [], [Diagnostic(shown(directory), "is not a directory", source=source)]
        names = sorted(os.listdir(directory))
    except OSError as error:
        problem = f"cannot be listed: {error.strerror or error}"
        return [], [Diagnostic(shown(directory), problem, source=source)]
    profiles: list[Profile] = []
    diagnostics: list[Diagnostic] = []
    first: dict[str, str] = {}
    for name in names:
        if name.startswith(".") or not name.lower().endswith(SUFFIXES):
            continue
        result, problems = read_file(directory / name, source, plugin, tools)
        if result is not None and result.name in first:
            problem = f'"{result.bare_name}" is already defined by {first[result.name]}; skipped'
            diagnostics.append(Diagnostic(result.origin, problem, field="name", source=source))
            continue  # its notes would be about a profile that is not loaded
        diagnostics += problems
        if result is not None:
            first[result.name] = result.origin
            profiles.append(result)
    return profiles, diagnostics


def read_plugin_source(
    plugin: str, source: Path | Profile
) -> tuple[list[Profile], list[Diagnostic]]:
    """What one ``register_profiles`` registration contributes."""
    if isinstance(source, Profile):
        where = source.path or f"plugin {plugin}"
        try:
            bare = check_name(source.name)
        except Invalid as error:
            return [], [Diagnostic(where, error.problem, field="name", source="plugin")]
        profile = attrs.evolve(source, name=f"{plugin}:{bare}", source="plugin", plugin=plugin)
        return [profile], []
    if source.is_dir():
        return read_directory(source, "plugin", plugin)
    result, problems = read_file(source, "plugin", plugin)
    return ([result] if result is not None else []), problems


def widening(
    profile: Profile, deployment: ToolFilter, plugins: Mapping[str, str | None]
) -> Diagnostic | None:
    """A project profile naming tools the deployment's filter does not admit, as a diagnostic.
    An entry naming a global tool is judged as that tool (``plugins``: the plugin that
    registered each); another entry as written, as a tool's and a plugin's name (``mcp.git``
    is within ``mcp.*``). A child is cut down to the deployment's filter whatever this says."""
    if profile.tools is None:
        return None  # every tool: still cut down to the deployment's filter when started
    allows = [g for g in (deployment.allow, *(deployment.also_allow or ())) if g is not None]
    denied = [
        tool
        for tool in profile.tools
        if not all(matches(globs, tool, plugins.get(tool, tool)) for globs in allows)
        or matches(deployment.deny or (), tool, plugins.get(tool, tool))
    ]
    if not denied:
        return None
    problem = "names tools the deployment does not allow: " + ", ".join(denied)
    return Diagnostic(profile.origin, problem, field="tools", source=profile.source)


def load_all(
    where: Locations,
    entries: list[tuple[str, Path | Profile]],
    deployment: ToolFilter | None = None,
    plugins: Mapping[str, str | None] | None = None,
) -> ProfileSet:
    """Merge every source (module docstring) into the set of profiles in effect; ``plugins``
    maps each global tool to the plugin that registered it (``widening``; and Claude Code's
    tool names map only to tools there)."""
    merged = _Merge(where, deployment, plugins or {})
    for profile in builtin_profiles():
        merged.add(profile)
    directories: list[tuple[Source, Path | None]] = [
        ("user", where.user),
        ("project", where.project),
        ("claude-user", where.claude_user),
        ("claude-project", where.claude_project),
    ]
    seen: list[Path] = []
    for source, directory in directories:
        if directory is not None and not any(_same_directory(directory, s) for s in seen):
            seen.append(directory)
            merged.add_directory(source, directory)
    for plugin, registered in entries:
        merged.add_plugin(plugin, registered)
    return merged.result()


class _Merge:
    """The profiles in effect so far, what they shadowed, and the diagnostics on the way."""

    def __init__(
        self,
        where: Locations,
        deployment: ToolFilter | None,
        plugins: Mapping[str, str | None],
    ) -> None:
        self.where = where
        self.deployment = deployment
        self.plugins = plugins
        self.project_memory = ProjectMemory(where.config)
        self.effective: dict[str, Profile] = {}
        self.shadowed: list[Shadowed] = []
        self.diagnostics: list[Diagnostic] = []
        self.watched: list[str] = []

    def add(self, profile: Profile) -> None:
        """``profile`` in effect; one of the same name before it is shadowed."""
        previous = self.effective.get(profile.name)
        if previous is not None:
            self.shadowed.append(
                Shadowed(previous.name, previous.source, previous.path, by=profile.source)
            )
        self.effective[profile.name] = profile

    def admit(self, profile: Profile) -> Profile | None:
        """``profile`` as it may be used (its memory directory set), or None after the
        diagnostic saying why not: a project profile may not widen the deployment's filter,
        and a memory must be allowed and its directory usable (``host.profiles.memory``)."""
        if self.deployment and profile.source in PROJECT_SOURCES:
            refusal = widening(profile, self.deployment, self.plugins)
            if refusal is not None:
                self.diagnostics.append(refusal)
                return None
        if profile.memory is not None:  # what its checks read, for the cache
            directory = self.where.memory_directory(profile.memory, profile.name)
            self.watched += [str(directory.parent), str(directory), str(directory / INDEX)]
            if profile.source in PROJECT_SOURCES and self.where.config is not None:
                self.watched.append(str(self.where.config))
        checked = attach(profile, self.where, self.project_memory)
        if isinstance(checked, Diagnostic):
            self.diagnostics.append(checked)
            return None
        note = index_note(checked)
        if note is not None:
            self.diagnostics.append(note)
        return checked

    def add_directory(self, source: Source, directory: Path) -> None:
        """A user, project or Claude Code directory; a Claude Code profile never overrides a
        profile of our own files (a diagnostic says so)."""
        profiles, problems = read_directory(directory, source, tools=self.plugins.keys())
        start = len(self.diagnostics)
        dropped: set[str] = set()
        for profile in profiles:
            ours = self.effective.get(profile.name)
            if source in CLAUDE_SOURCES and ours is not None and ours.source in OUR_FILES:
                problem = f'"{profile.name}" is defined by {ours.origin}, which wins; skipped'
                self.diagnostics.append(
                    Diagnostic(profile.origin, problem, field="name", source=source)
                )
                dropped.add(profile.origin)
                continue
            admitted = self.admit(profile)
            if admitted is not None:
                self.add(admitted)
            else:
                dropped.add(profile.origin)
        # the file's own problems first; notes about a profile not loaded are left out
        kept = [d for d in problems if d.skipped or d.path not in dropped]
        self.diagnostics[start:start] = kept

    def add_plugin(self, plugin: str, registered: Path | Profile) -> None:
        """What a plugin registered; a name already in effect is skipped with a diagnostic."""
        profiles, problems = read_plugin_source(plugin, registered)
        self.diagnostics += problems
        for profile in profiles:
            if profile.name in self.effective:
                problem = f'"{profile.name}" is already registered by plugin {plugin}; skipped'
                self.diagnostics.append(
                    Diagnostic(profile.origin, problem, field="name", source="plugin")
                )
                continue
            admitted = self.admit(profile)
            if admitted is not None:
                self.effective[profile.name] = admitted

    def result(self) -> ProfileSet:
        """The merged set, sorted by name, with the bare-name aliases of plugin profiles."""
        ordered = sorted(self.effective.values(), key=lambda p: (p.name.casefold(), p.name))
        return ProfileSet(
            profiles=tuple(ordered),
            aliases=_bare_aliases(self.effective),
            diagnostics=tuple(self.diagnostics),
            shadowed=tuple(self.shadowed),
            watched=tuple(dict.fromkeys(self.watched)),
        )


def _bare_aliases(effective: dict[str, Profile]) -> tuple[tuple[str, str], ...]:
    """``(bare name, full name)`` of each plugin profile whose bare name is unambiguous: no
    other plugin profile has it and no profile is called so."""
    plugin_profiles = [p for p in effective.values() if p.plugin is not None]
    counts: dict[str, int] = {}
    for profile in plugin_profiles:
        counts[profile.bare_name] = counts.get(profile.bare_name, 0) + 1
    return tuple(
        sorted(
            (profile.bare_name, profile.name)
            for profile in plugin_profiles
            if counts[profile.bare_name] == 1 and profile.bare_name not in effective
        )
    )


def _same_directory(first: Path, second: Path) -> bool:
    try:
        return first.resolve() == second.resolve()
    except OSError:
        return False
