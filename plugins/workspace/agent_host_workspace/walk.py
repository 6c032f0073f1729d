"""Walking a directory as ``rg`` does: ``.gitignore`` rules honoured, ``.git`` skipped.

The order is ``rg --sort path``'s: each directory's entries by name, a directory's files
listed where its name sorts. Hidden files are included; ``.git`` directories never are;
symbolic links are not followed (nor listed), so a walk never leaves the root. The
``.gitignore`` of every directory from the file system's root down to the one walked applies,
the deeper ones first (git's rules: a later ``!pattern`` re-includes), read with ``pathspec``.
A ``.gitignore`` that is not a regular file, or larger than ``MAX_IGNORE_BYTES``, is skipped.
Paths are plain strings here (``pathlib`` would cost more than the search, per file).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from pathspec import GitIgnoreSpec, RegexPattern

from agent_host_workspace.base import Refused
from host.api import FileRefused, read_regular, shown

IGNORE_FILE = ".gitignore"
MAX_IGNORE_BYTES = 1 << 20
SKIPPED_DIRECTORY = ".git"
_DIR_GROUP = "(?P<ps_d>"
"""The group ``pathspec`` ends each pattern's expression with (marking a directory match);
were it named otherwise, the joined expression would not compile and the spec is asked."""

Stop = Callable[[], bool]
"""Whether to stop walking now (the call was interrupted)."""


class Rule:
    """One ``.gitignore``: its directory (``base``, ending in ``/``), its spec, and ``quick``,
    its patterns as one regular expression: a path none of them matches is left undecided
    without asking the spec (None when they cannot be joined: the spec is always asked)."""

    __slots__ = ("base", "quick", "spec")

    def __init__(self, base: str, spec: GitIgnoreSpec) -> None:
        self.base = base
        self.spec = spec
        self.quick = _joined(spec)

    def decides(self, relative: str) -> bool | None:
        """True: ``relative`` (a path from ``base``, a directory's ending in ``/``) is
        ignored; False: re-included; None: this file says nothing about it."""
        if self.quick is not None and self.quick.search(relative) is None:
            return None
        return self.spec.check_file(relative).include


def _joined(spec: GitIgnoreSpec) -> re.Pattern[str] | None:
    """Any of ``spec``'s patterns, as one expression (``search`` finds a match when one of
    them would; the directory group each ends with made plain); None when they differ in
    flags or do not join."""
    active = [p for p in spec.patterns if p.include is not None]  # blank lines, comments: no
    regexes = [p.regex for p in active if isinstance(p, RegexPattern) and p.regex is not None]
    if len(regexes) != len(active) or len({r.flags for r in regexes}) > 1:
        return None
    if not regexes:
        return re.compile(r"(?!)")  # nothing matches: an empty or all-comment file
    text = "|".join(f"(?:{_plain_group(r.pattern)})" for r in regexes)
    try:
        return re.compile(text, regexes[0].flags)
    except (re.error, TypeError):
        return None


def _plain_group(pattern: str) -> str:
    """``pattern`` with its last ``_DIR_GROUP`` (the one ``pathspec`` appends) unnamed."""
    head, group, tail = pattern.rpartition(_DIR_GROUP)
    return f"{head}(?:{tail}" if group else pattern


class Ignores:
    """The ``.gitignore`` rules in effect in one directory, outermost first."""

    def __init__(self, rules: tuple[Rule, ...] = ()) -> None:
        self.rules = rules

    @classmethod
    def above(cls, directory: str) -> Ignores:
        """The rules of ``directory``'s ancestors (not its own)."""
        ignores = cls()
        for parent in reversed(Path(directory).parents):
            ignores = ignores.entering(str(parent))
        return ignores

    def entering(self, directory: str) -> Ignores:
        """These rules plus ``directory``'s own ``.gitignore``, if it has one."""
        spec = _load(os.path.join(directory, IGNORE_FILE))
        if spec is None:
            return self
        return Ignores((*self.rules, Rule(os.path.join(directory, ""), spec)))

    def within(self, directory: str) -> list[tuple[str, Rule]]:
        """Each rule, deepest first, with the path of ``directory`` from the rule's base (an
        entry's path from that base is this plus its name): worked out once per directory."""
        inside = os.path.join(directory, "")
        return [(inside[len(rule.base) :], rule) for rule in reversed(self.rules)]


def ignored(local: list[tuple[str, Rule]], name: str, is_dir: bool) -> bool:
    """Whether the rules (``Ignores.within`` the entry's directory) exclude the entry
    ``name``: the deepest rule that decides wins."""
    suffix = "/" if is_dir else ""
    for prefix, rule in local:
        decided = rule.decides(f"{prefix}{name}{suffix}")
        if decided is not None:
            return decided
    return False


def _load(path: str) -> GitIgnoreSpec | None:
    try:
        data = read_regular(path, MAX_IGNORE_BYTES)
    except FileRefused:
        return None
    if data is None:
        return None
    return GitIgnoreSpec.from_lines(data.decode("utf-8", "replace").splitlines())


class Glob:
    """A compiled ``glob`` argument: which paths (relative to its base) it chooses. As with
    ``rg --glob``, ``!glob`` chooses every path but those ``glob`` matches (``excludes``)."""

    def __init__(self, spec: GitIgnoreSpec, excludes: bool) -> None:
        self.spec = spec
        self.excludes = excludes

    def match_file(self, path: str) -> bool:
        """Whether the glob chooses ``path``."""
        return self.spec.match_file(path) != self.excludes


def compile_glob(glob: str) -> Glob:
    """``glob`` as a ``.gitignore``-style pattern, ``!`` first meaning "all but"; ``Refused``
    saying why when it is not one (``rg`` refuses the same globs, so both engines of ``grep``
    agree)."""
    problem = None
    if not glob or "\x00" in glob:
        problem = "empty" if not glob else "contains a NUL character"
    elif glob.rfind("[") > glob.rfind("]"):
        problem = "unclosed character class; missing ']'"
    else:
        try:
            GitIgnoreSpec.from_lines([glob])  # "!" alone is refused here
            excludes = glob.startswith("!")
            return Glob(GitIgnoreSpec.from_lines([glob[1:] if excludes else glob]), excludes)
        except ValueError as error:
            problem = str(error)
    raise Refused(f"invalid glob '{shown(glob)}': {problem}")


class Select:
    """A ``.gitignore``-style glob over paths relative to the directory ``base``
    (``rg --glob``)."""

    def __init__(self, glob: str, base: str) -> None:
        self.glob = compile_glob(glob)
        self.prefix = os.path.join(base, "")

    def matches(self, path: str) -> bool:
        """Whether the file ``path`` (under ``base``) matches the glob."""
        return self.glob.match_file(path[len(self.prefix) :])


def walk(start: str, stop: Stop, select: Select | None = None) -> Iterator[str]:
    """The files under the directory ``start`` that the rules leave, in ``rg``'s order. With
    ``select`` (``rg --glob``'s rule), a file is walked when it matches, whatever the
    ``.gitignore`` rules say (the directories entered are still those the rules leave)."""
    yield from _walk(start, Ignores.above(start).entering(start), stop, select)


def _walk(directory: str, ignores: Ignores, stop: Stop, select: Select | None) -> Iterator[str]:
    try:
        with os.scandir(directory) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
    except OSError:
        return
    local = ignores.within(directory)
    for entry in entries:
        if stop():
            return
        if entry.is_symlink():
            continue
        name = entry.name
        if entry.is_dir():
            if name != SKIPPED_DIRECTORY and not ignored(local, name, True):
                yield from _walk(entry.path, ignores.entering(entry.path), stop, select)
        elif entry.is_file() and _chosen(entry.path, name, local, select):
            yield entry.path


def _chosen(path: str, name: str, local: list[tuple[str, Rule]], select: Select | None) -> bool:
    """Whether a file met while walking is listed: by ``select`` when given (and by the
    ``.gitignore`` rules as well when it only excludes, as ``rg`` does), else by the rules."""
    if select is None:
        return not ignored(local, name, False)
    if select.glob.excludes:
        return select.matches(path) and not ignored(local, name, False)
    return select.matches(path)
