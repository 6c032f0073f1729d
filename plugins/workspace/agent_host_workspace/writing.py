"""``write_file`` and ``edit_file``: whole-file replacements, atomic (``host.atomic``).

A reader sees the old content or the new, never a mix, and a refused or failed write leaves
the file as it was. The file written is the real path (a link inside the root is written
through to its target, which is inside the root too); its permission bits are kept, whatever
the umask (``KEPT_BITS``).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from agent_host_workspace.base import Refused
from agent_host_workspace.paths import Root
from host.api import FileRefused, read_regular, replace_file

MAX_WRITE_BYTES = 10 * 1024 * 1024
KEPT_BITS = 0o1777
"""The permission bits a replaced file keeps: not set-user-ID nor set-group-ID (a write by
anyone but root drops them too)."""


def write_text(root: Root, path: str, content: str) -> str:
    """Replace (or create) ``path`` with ``content``; its missing folders are created."""
    real = root.resolve(path)
    data = _encoded(content)
    existed = _existing_mode(real, path)
    real.parent.mkdir(parents=True, exist_ok=True)
    _replace(real, data, existed)
    verb = "replaced" if existed is not None else "created"
    return f"{verb} {path} ({len(data)} bytes)"


def edit_text(root: Root, path: str, old: str, new: str, replace_all: bool) -> str:
    """Replace ``old`` by ``new`` in ``path``: once (``old`` must occur exactly once) or, with
    ``replace_all``, everywhere. Nothing changes when the edit is refused."""
    if not old:
        raise Refused("old must not be empty; use write_file to write a whole file")
    if old == new:
        raise Refused("old and new are the same; nothing to change")
    real = root.resolve(path)
    mode = _existing_mode(real, path)
    if mode is None:
        raise Refused(f"{path}: no such file")
    try:
        data = read_regular(real, MAX_WRITE_BYTES)
    except FileRefused as refused:
        raise Refused(f"{path}: {refused.reason}") from None
    if data is None:
        raise Refused(f"{path}: no such file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused(f"{path}: is not UTF-8 text; edit_file edits text only") from None
    count = text.count(old)
    if count == 0:
        raise Refused(f"{path}: old text not found; nothing changed")
    if count > 1 and not replace_all:
        raise Refused(
            f"{path}: old text occurs {count} times; give more context to make it unique, "
            "or replace_all=true; nothing changed"
        )
    _replace(real, _encoded(text.replace(old, new)), mode)
    return f"edited {path} ({count} replacement{'s' if count > 1 else ''})"


def _encoded(content: str) -> bytes:
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError:
        raise Refused("content is not valid UTF-8 text; nothing written") from None
    if len(data) > MAX_WRITE_BYTES:
        raise Refused(f"content is larger than {MAX_WRITE_BYTES} bytes; nothing written")
    return data


def _existing_mode(real: Path, path: str) -> int | None:
    """The permission bits of the regular file at ``real``; None when there is none;
    ``Refused`` for anything else there (a directory, a FIFO, a device)."""
    try:
        info = os.stat(real)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise Refused(f"{path}: cannot be written: {error.strerror or error}") from None
    if not stat.S_ISREG(info.st_mode):
        raise Refused(f"{path}: is not a regular file; nothing written")
    return stat.S_IMODE(info.st_mode) & KEPT_BITS


def _replace(real: Path, data: bytes, mode: int | None) -> None:
    """Write ``data`` at ``real``: a new file as the umask allows, a replaced one with its
    permission bits (``mode``) exactly."""
    try:
        if mode is None:
            replace_file(real, data)
        else:
            replace_file(real, data, mode, exact_mode=True)
    except OSError as error:
        raise Refused(f"{real.name}: cannot be written: {error.strerror or error}") from None
