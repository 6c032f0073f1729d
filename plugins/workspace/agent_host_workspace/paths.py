"""The workspace root and the one rule every path a tool is given goes through.

A path is relative to the root (an absolute path is accepted when it lies inside it). It is
refused, with one line naming it and why, when it holds a NUL character or text that is not
valid UTF-8, has a ``..`` component, is absolute and outside the root, or leads outside the
root once its symbolic links are followed (the real path of the root is what counts, so a root
reached through a link is fine). Nothing is read or written for a refused path.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from agent_host_workspace.base import Refused
from host.api import shown


class Root:
    """The directory the workspace tools work under (its real path); ``Refused`` when it is
    not an existing directory."""

    def __init__(self, directory: Path) -> None:
        self.path = Path(os.path.realpath(directory))
        self.prefix = os.path.join(self.path, "")
        self.check()

    def check(self) -> None:
        """``Refused`` unless the root is (still) a directory: every tool says so the same
        way, before looking at its arguments."""
        try:
            mode = os.stat(self.path).st_mode
        except FileNotFoundError:
            raise Refused(f"workspace root {self.path} does not exist") from None
        except OSError as error:
            raise Refused(f"workspace root {self.path}: {error.strerror or error}") from None
        if not stat.S_ISDIR(mode):
            raise Refused(f"workspace root {self.path} is not a directory")

    def resolve(self, given: str) -> Path:
        """The real path ``given`` names inside the root (it need not exist yet);
        ``Refused`` when it is not allowed (module docstring)."""
        if "\x00" in given:
            raise Refused(f'path "{shown(given)}": contains a NUL character')
        try:
            given.encode("utf-8")
        except UnicodeEncodeError:
            raise Refused(f'path "{shown(_printable(given))}": is not valid UTF-8') from None
        if ".." in Path(given).parts:
            raise Refused(f'path "{shown(given)}": ".." is not allowed; name paths inside the root')
        joined = self.path / given  # an absolute ``given`` replaces the root
        real = Path(os.path.realpath(joined))
        if not _inside(real, self.path):
            if not _inside(Path(os.path.normpath(joined)), self.path):
                raise Refused(f'path "{shown(given)}": is outside the workspace root {self.path}')
            raise Refused(
                f'path "{shown(given)}": leads outside the workspace root through a symbolic link'
            )
        return real

    def relative(self, path: Path | str) -> str:
        """``path`` (a real path inside the root) as the tools show it: relative to the root,
        ``.`` for the root itself."""
        text = os.fspath(path)
        return text[len(self.prefix) :] if text.startswith(self.prefix) else "."


def _inside(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def _printable(text: str) -> str:
    """``text`` with lone surrogates (undecodable bytes) escaped."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")
