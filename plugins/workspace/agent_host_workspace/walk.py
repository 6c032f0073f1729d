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
from collections.abc import Callable, Iterator
from pathlib import Path

from pathspec import GitIgnoreSpec

from agent_host_workspace.base import Refused
from host.profiles.model import shown
from host.project_files import FileRefused, read_regular

IGNORE_FILE = ".gitignore"
MAX_IGNORE_BYTES = 1 << 20
SKIPPED_DIRECTORY = ".git"

Stop = Callable[[], bool]
"""Whether to stop walking now (the call was interrupted)."""


class Ignores:
    """The ``.gitignore`` rules in effect in one directory: ``(base + "/", spec)``, outermost
    first."""

    def __init__(self, rules: tuple[tuple[str, GitIgnoreSpec], ...] = ()) -> None:
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
        return Ignores((*self.rules, (os.path.join(directory, ""), spec)))

    def ignored(self, path: str, is_dir: bool) -> bool:
        """Whether the rules exclude ``path`` (the deepest rule that decides wins)."""
        for base, spec in reversed(self.rules):
            relative = path[len(base) :] + ("/" if is_dir else "")
            decided = spec.check_file(relative).include
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


def compile_glob(glob: str) -> GitIgnoreSpec:
    """``glob`` as a ``.gitignore``-style pattern; ``Refused`` saying why when it is not one
    (``rg`` refuses the same globs, so both engines of ``grep`` agree)."""
    problem = None
    if not glob or "\x00" in glob:
        problem = "empty" if not glob else "contains a NUL character"
    elif glob.rfind("[") > glob.rfind("]"):
        problem = "unclosed character class; missing ']'"
    else:
        try:
            return GitIgnoreSpec.from_lines([glob])
        except ValueError as error:
            problem = str(error)
    raise Refused(f"invalid glob '{shown(glob)}': {problem}")


class Select:
    """A ``.gitignore``-style glob over paths relative to the directory ``base``
    (``rg --glob``)."""

    def __init__(self, glob: str, base: str) -> None:
        self.spec = compile_glob(glob)
        self.prefix = os.path.join(base, "")

    def matches(self, path: str) -> bool:
        """Whether the file ``path`` (under ``base``) matches the glob."""
        return self.spec.match_file(path[len(self.prefix) :])


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
    for entry in entries:
        if stop():
            return
        if entry.is_symlink():
            continue
        path = entry.path
        if entry.is_dir():
            if entry.name != SKIPPED_DIRECTORY and not ignores.ignored(path, True):
                yield from _walk(path, ignores.entering(path), stop, select)
        elif entry.is_file() and _chosen(path, ignores, select):
            yield path


def _chosen(file: str, ignores: Ignores, select: Select | None) -> bool:
    """Whether a file met while walking is listed: by ``select`` when given, else by the
    ``.gitignore`` rules."""
    return select.matches(file) if select is not None else not ignores.ignored(file, False)
