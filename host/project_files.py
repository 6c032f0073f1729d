"""Reading a file the working directory holds: a regular file of bounded size, or nothing.

A cloned repository decides what sits in the working directory and below it: its
``.mcp.json`` may be a link to ``/dev/zero``, a FIFO, a socket or a gigabyte of JSON. Every
such file the host reads goes through ``read_regular`` (``agent-host.toml``, ``.mcp.json``,
profile and Claude Code agent files, profile memory, the session header cache) or, for the
files of the data directory that grow with use and have no limit (session logs, the identity
index), ``open_regular``. A walk that lists directories itself (the workspace ``grep``) reads
the files its listing showed as regular files through ``read_listed``, the cheaper door with the
same rules:

- a link is followed only to a regular file; a directory, device, FIFO or socket is refused
  before it is opened (opening a device can have effects of its own). On Linux the check is
  made on an ``O_PATH`` handle and the file opened through it, so a file swapped in between
  is never opened; elsewhere what was opened is checked again (``fstat``), so a file swapped
  in between the check and the open is opened, then refused. The open is non-blocking, so a
  FIFO swapped in never blocks it;
- each kind of file ``read_regular`` reads has its limit, kept by its reader and listed in
  docs/project-files.md: a larger file is refused without being read, unless the caller reads
  only its head (``cut``).

A refusal raises ``FileRefused``, whose text is one line naming the file and why; the caller
skips that one source and says so.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_FLAGS = os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_LISTED_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | _FLAGS
_CHUNK = 1 << 16
_PROC_FD = "/proc/self/fd/"
_BY_HANDLE = hasattr(os, "O_PATH") and os.path.isdir(_PROC_FD)
_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)


class FileRefused(Exception):
    """A file that was not read; ``str()`` is one line: the file, then ``reason``."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason

    @classmethod
    def too_large(cls, path: Path | str, limit: int) -> FileRefused:
        return cls(os.fspath(path), f"larger than {limit} bytes")

    @classmethod
    def unreadable(cls, path: Path | str, error: OSError) -> FileRefused:
        return cls(os.fspath(path), f"cannot be read: {error.strerror or error}")


def read_regular(path: Path | str, limit: int, *, cut: bool = False) -> bytes | None:
    """The bytes of the regular file at ``path`` (a link to one is followed); None when there
    is no file there (nor a dangling link). ``FileRefused`` for anything else, a file larger
    than ``limit`` bytes included — with ``cut``, such a file gives its first ``limit + 1``
    bytes instead (more than ``limit``: the caller knows it was cut)."""
    fd = open_regular(path)
    if fd is None:
        return None
    name = os.fspath(path)
    try:
        if os.fstat(fd).st_size > limit and not cut:
            raise FileRefused.too_large(name, limit)
        data = _read(fd, limit + 1)
    except OSError as error:
        raise FileRefused.unreadable(name, error) from None
    finally:
        os.close(fd)
    if len(data) > limit and not cut:  # it grew after the check
        raise FileRefused.too_large(name, limit)
    return data


def read_listed(path: str, limit: int) -> bytes | None:
    """The bytes of ``path``, which a directory listing (``os.scandir``) has just shown as a
    regular file, not a link; None when it is gone since. ``FileRefused`` as ``read_regular``
    (a file larger than ``limit`` bytes included) and for a link swapped in since the listing.

    The name is opened once, with ``O_NOFOLLOW`` (a link is refused, never followed) and
    ``O_NONBLOCK`` (a FIFO swapped in never blocks the open), and what was opened is checked
    (``fstat``): a device swapped in between the listing and the open is opened, then refused
    unread. A file that has not grown since is read in one ``read``."""
    try:
        fd = os.open(path, _LISTED_FLAGS)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise FileRefused(path, "is a symbolic link, not a regular file") from None
        raise FileRefused.unreadable(path, error) from None
    try:
        info = os.fstat(fd)
        _check(path, info)
        if info.st_size > limit:
            raise FileRefused.too_large(path, limit)
        data = os.read(fd, info.st_size + 1)
        if len(data) > info.st_size:  # it grew since the check
            data += _read(fd, limit + 1 - len(data))
    except OSError as error:
        raise FileRefused.unreadable(path, error) from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise FileRefused.too_large(path, limit)
    return data


def open_regular(path: Path | str, flags: int = os.O_RDONLY) -> int | None:
    """A descriptor of the regular file at ``path`` (a link to one is followed), opened with
    ``flags`` and ``O_NONBLOCK`` (no effect on a regular file); None when there is no file
    there. ``FileRefused`` for anything else, with no limit on the size: for files that grow
    with use, such as session logs. The caller closes the descriptor.

    On Linux the name is opened with ``O_PATH`` (a handle that opens nothing: no device or
    FIFO open runs), that handle is checked, and only a regular file is then opened, through
    ``/proc/self/fd``: the very file checked. Elsewhere the name is checked (``stat``), opened,
    and what was opened checked again: a device swapped in between is opened, then refused."""
    name = os.fspath(path)
    try:
        if _BY_HANDLE:
            return _open_by_handle(name, flags)
        _check(name, os.stat(name))  # what a link leads to, before opening it
        fd = os.open(name, flags | _FLAGS)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as error:
        raise FileRefused.unreadable(name, error) from None
    try:
        _check(name, os.fstat(fd))  # what was opened: it may have been swapped
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_by_handle(name: str, flags: int) -> int:
    """``name`` opened with ``flags`` if an ``O_PATH`` handle on it shows a regular file."""
    handle = os.open(name, os.O_PATH | os.O_CLOEXEC)
    try:
        _check(name, os.fstat(handle))
        return os.open(f"{_PROC_FD}{handle}", flags | _FLAGS)
    finally:
        os.close(handle)


def _check(name: str, info: os.stat_result) -> None:
    """Refuse anything but a regular file."""
    if not stat.S_ISREG(info.st_mode):
        kind = next((text for test, text in _KINDS if test(info.st_mode)), "not a regular file")
        raise FileRefused(name, f"is {kind}{_target(name)}, not a regular file")


def _target(name: str) -> str:
    """`` (a link to <target>)`` when ``name`` is a symbolic link, else nothing."""
    try:
        return f" (a link to {os.readlink(name)})" if os.path.islink(name) else ""
    except OSError:
        return ""


def _read(fd: int, most: int) -> bytes:
    """Up to ``most`` bytes from ``fd``."""
    chunks: list[bytes] = []
    total = 0
    while total < most:
        chunk = os.read(fd, min(_CHUNK, most - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)
