"""One memory directory: every path confined to it, and the head of its ``MEMORY.md`` index.

A path is relative to the directory, made of plain names (no ``..``, no absolute path, no
hidden names); after symlinks are resolved it must still lie inside the directory, so a link
pointing elsewhere is refused like ``../``. A directory the repository controls (project and
local memory) must not itself be reached through a link: ``repository_links`` names the folders
that are checked before every operation. A refused or failed operation raises ``Refused`` with
one line for the model and changes nothing. Writes are atomic (a temporary file renamed over
the target); the directory is created by the first write. Only regular files are read, and
never more than needed: a file at most ``FILE_BYTES``, the index at most ``INDEX_LINES`` lines
and ``INDEX_BYTES`` bytes, whatever its size.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

import attrs

from host.atomic import replace_file
from host.project_files import FileRefused, read_regular

INDEX = "MEMORY.md"
INDEX_LINES = 200
INDEX_BYTES = 64 * 1024
FILE_BYTES = 256 * 1024


class Refused(Exception):
    """A memory operation that was refused or failed; the message is one line for the model."""


@attrs.frozen
class IndexHead:
    """The first lines of ``MEMORY.md`` (empty when there is none) and whether more follow."""

    lines: tuple[str, ...] = ()
    truncated: bool = False


REPOSITORY_SCOPES = ("project", "local")


def repository_links(directory: Path, scope: str) -> tuple[Path, ...]:
    """The folders of a ``scope`` memory ``directory`` that must not be symbolic links: for
    project and local memory (``<project>/.agent-host/<folder>/<profile>``, written by the
    repository's content) the three below the project; none for user memory."""
    if scope not in REPOSITORY_SCOPES:
        return ()
    return (directory.parent.parent, directory.parent, directory)


def linked(folders: Sequence[Path]) -> Path | None:
    """The first of ``folders`` that is a symbolic link, or None."""
    return next((folder for folder in folders if folder.is_symlink()), None)


class MemoryDirectory:
    """The memory kept in ``root`` (which need not exist yet); none of ``unlinked`` may be a
    symbolic link (``repository_links``)."""

    def __init__(self, root: Path, unlinked: Sequence[Path] = ()) -> None:
        self.root = root
        self.unlinked = tuple(unlinked)

    def base(self) -> Path:
        """The directory's real path; ``Refused`` when it is reached through a forbidden link."""
        link = linked(self.unlinked)
        if link is not None:
            raise Refused(f"{link} is a symbolic link; this memory is not kept through links")
        try:
            return self.root.resolve()
        except (OSError, RuntimeError) as error:  # RuntimeError: a symbolic link loop
            raise Refused(f"the memory directory cannot be followed: {error}") from None

    def locate(self, relative: str) -> Path:
        """The real path ``relative`` names inside the directory; ``Refused`` if it is not a
        plain relative path or leads outside (through ``..`` or a symlink)."""
        if not relative or "\x00" in relative:
            raise Refused("a memory path must be a non-empty file name")
        pure = PurePosixPath(relative)
        if pure.is_absolute() or any(part in ("..", ".") for part in pure.parts):
            raise Refused(f"{relative!r} is outside the memory directory")
        if any(part.startswith(".") for part in pure.parts):
            raise Refused(f"{relative!r}: memory file names must not start with '.'")
        base = self.base()
        try:
            target = (base / pure).resolve()
        except (OSError, RuntimeError) as error:  # RuntimeError: a symbolic link loop
            raise Refused(f"{relative!r} cannot be followed: {error}") from None
        if target == base or not target.is_relative_to(base):
            raise Refused(f"{relative!r} is outside the memory directory")
        return target

    def read(self, relative: str) -> str:
        """The text of one memory file (cut at ``FILE_BYTES``, with a note saying so)."""
        path = self.locate(relative)
        data = _read_regular(path, FILE_BYTES, relative)
        if data is None:
            raise Refused(f"{relative!r} does not exist in the memory directory")
        text = data[:FILE_BYTES].decode("utf-8", errors="replace")
        if len(data) > FILE_BYTES:
            text += f"\n[cut: the file is longer than {FILE_BYTES} bytes]"
        return text

    def write(self, relative: str, content: str) -> str:
        """Replace one memory file with ``content`` (empty: delete it); what was done."""
        data = content.encode("utf-8")
        if len(data) > FILE_BYTES:
            raise Refused(f"a memory file holds at most {FILE_BYTES} bytes; nothing was written")
        self._ensure_root()
        path = self.locate(relative)
        if not data:
            try:
                path.unlink()
            except FileNotFoundError:
                return f"{relative} did not exist"
            except OSError as error:
                raise Refused(f"cannot delete {relative}: {error.strerror or error}") from None
            return f"deleted {relative}"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            replace_file(path, data)
        except OSError as error:
            problem = error.strerror or str(error)
            raise Refused(f"cannot write {relative}: {problem}; nothing was written") from None
        return f"wrote {len(data)} bytes to {relative}"

    def listing(self) -> list[tuple[str, int]]:
        """``(relative path, size)`` of every memory file (links and hidden names left out),
        sorted."""
        base = self.base()
        if not base.is_dir():
            return []
        found: list[tuple[str, int]] = []
        for folder, folders, files in os.walk(base):
            folders[:] = sorted(f for f in folders if not f.startswith("."))
            for name in sorted(files):
                path = Path(folder) / name
                if name.startswith(".") or path.is_symlink():
                    continue
                try:
                    size = path.stat().st_size
                except OSError:
                    continue
                found.append((path.relative_to(base).as_posix(), size))
        return sorted(found)

    def index_head(self) -> IndexHead:
        """The first ``INDEX_LINES`` lines of ``MEMORY.md`` (reading at most ``INDEX_BYTES``)."""
        data = _read_regular(self.locate(INDEX), INDEX_BYTES, INDEX)
        if data is None:
            return IndexHead()
        text = data[:INDEX_BYTES].decode("utf-8", errors="replace")
        lines = text.splitlines()
        cut = len(data) > INDEX_BYTES or len(lines) > INDEX_LINES
        return IndexHead(tuple(lines[:INDEX_LINES]), cut)

    def _ensure_root(self) -> None:
        self.base()
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise Refused(f"the memory directory {self.root} is not a directory") from None
        except OSError as error:
            problem = error.strerror or str(error)
            raise Refused(f"cannot create the memory directory {self.root}: {problem}") from None
        if not self.root.is_dir():
            raise Refused(f"the memory directory {self.root} is not a directory")


def _read_regular(path: Path, limit: int, shown: str) -> bytes | None:
    """The regular file ``path`` up to ``limit + 1`` bytes (more than ``limit``: it is longer);
    None if there is none. Anything else is ``Refused`` (``host.project_files``)."""
    try:
        return read_regular(path, limit, cut=True)
    except FileRefused as refused:
        raise Refused(f"{shown!r} {refused.reason}") from None
