"""Replacing a file whole, so a reader sees the old content or the new, never a mix."""

from __future__ import annotations

import os
from pathlib import Path


def replace_file(
    path: Path, data: bytes, mode: int = 0o644, *, sync: bool = False, exact_mode: bool = False
) -> None:
    """Write ``data`` to a new hidden file beside ``path`` (never through a link; created with
    ``mode`` less the umask, or ``mode`` itself with ``exact_mode``; flushed to disk first with
    ``sync``), then rename it over ``path`` (a link there is replaced, its target untouched);
    on failure the temporary file is removed and ``path`` is untouched."""
    temporary = path.with_name(f".{path.name}.{os.urandom(6).hex()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    handle = os.open(temporary, flags, mode)
    try:
        if exact_mode:
            os.fchmod(handle, mode)
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            if sync:
                stream.flush()
                os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
