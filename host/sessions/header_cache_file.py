"""The header cache's file: what one listing learned, for the first listing of the next process.

Every CLI invocation is a new process; without this file its first ``list()`` would open every
session log of the data directory. The file is ``<data_dir>/.index/headers`` (beside the
identity index), derived data that any listing rebuilds::

    agent-host/header-cache 1 <dev> <inode> <mtime_ns> <ctime_ns>
    <file name> <inode> <ctime_ns> <size> <the log's header line, as stored>
    <file name> <inode> <ctime_ns> <size> -
    …

The first line holds the data directory's key when its timestamps were settled, ``-`` otherwise;
an entry ending in ``-`` is a file that was read and is no session log.
Nothing read here is served on trust: ``HeaderCache`` uses an entry only for a file the
directory lists now, only when its inode (directory unchanged) or its stat key (directory
changed) is the one recorded, and a stored header line must decode as a log's header line does
and name that very file. The file is read as ``host.project_files`` reads a project's files: one
that is not a regular file (a link to one is followed) or is larger than ``BYTES_PER_ENTRY``
per listed file is refused with a warning and ignored whole, as is one that lacks the first
line; a damaged entry line is skipped.
Either way the listing reads those headers from their logs and writes the file anew. (Whoever
can write this file can write the logs themselves: it is trusted as far as the directory is.)

The file is replaced whole through ``host.atomic.replace_file``: concurrent listings in several
processes each replace it, the last one winning, and every version is a valid cache. It is never
written through a link (``.index`` must be a directory of its own). A write that fails, as in a
read-only data directory, is logged at debug level and changes nothing else.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from collections.abc import Mapping
from pathlib import Path

from host.atomic import replace_file
from host.project_files import FileRefused, read_regular
from host.sessions.codec import decode_header
from host.sessions.jsonl_writer import SUFFIX
from host.sessions.model import SessionHeader

log = logging.getLogger(__name__)

CACHE_PATH = Path(".index") / "headers"
"""Where the file lives, relative to the data directory."""

FileKey = tuple[int, int, int]
"""A session file's (inode, ctime_ns, size)."""

DirKey = tuple[int, int, int, int]
"""The data directory's (device, inode, mtime_ns, ctime_ns)."""

Cached = tuple[FileKey, SessionHeader | None, bytes]
"""A file's key, its header (``None``: not a session log) and its header line."""

BYTES_PER_ENTRY = 4096
"""A file larger than this per listed file is not read (a real one holds about 250 bytes)."""

_FORMAT = b"agent-host/header-cache 1"
_NO_LOG = b"-"


def load(path: Path, listed: int) -> tuple[DirKey | None, dict[str, Cached]]:
    """The directory key and the entries stored at ``path`` for a directory listing ``listed``
    files; ``(None, {})`` when there is no usable file. Never raises."""
    data = _read(path, BYTES_PER_ENTRY * (listed + 1))
    if data is None:
        return None, {}
    lines = data.split(b"\n")
    lines.pop()  # after the last newline: nothing, or a torn line
    if not lines:
        return None, {}
    first = lines[0].split(b" ")
    if b" ".join(first[:2]) != _FORMAT:
        return None, {}
    try:
        dir_key = _dir_key(first[2:])
    except ValueError:
        return None, {}
    entries = {}
    for line in lines[1:]:
        entry = _entry(line)
        if entry is not None:
            entries[entry[0]] = entry[1]
    return dir_key, entries


def _dir_key(fields: list[bytes]) -> DirKey | None:
    """``None`` for ``-``, else four numbers (``ValueError`` for anything else)."""
    if fields == [b"-"]:
        return None
    device, inode, mtime, ctime = map(int, fields)
    return device, inode, mtime, ctime


def _read(path: Path, limit: int) -> bytes | None:
    """The whole file if it is a regular file of at most ``limit`` bytes, else ``None`` (a file
    that is there but refused is one warning line)."""
    try:
        return read_regular(path, limit)
    except FileRefused as refused:
        log.warning("header cache %s; the listing reads the logs' headers", refused)
        return None


def _entry(line: bytes) -> tuple[str, Cached] | None:
    """One entry line as ``(file name, cached)``, or ``None`` if it is not a sound entry."""
    fields = line.split(b" ", 4)
    if len(fields) != 5:
        return None
    name, inode, ctime, size, header_line = fields
    try:
        file_name = name.decode("ascii")  # a log's name is ASCII (SESSION_ID_PATTERN)
        key = (int(inode), int(ctime), int(size))
        if header_line == _NO_LOG:
            return file_name, (key, None, b"")
        header = decode_header(header_line)
    except (ValueError, RecursionError):  # RecursionError: deep nesting, stdlib json
        return None
    if file_name != header.id + SUFFIX:
        return None
    return file_name, (key, header, header_line)


def save(path: Path, dir_key: DirKey | None, entries: Mapping[str, Cached]) -> None:
    """Replace the file at ``path`` with ``dir_key`` and ``entries``. Never raises: a failure
    is logged at debug level."""
    head = _FORMAT + (b" %d %d %d %d\n" % dir_key if dir_key is not None else b" -\n")
    body = b"".join(
        b"%s %d %d %d %s\n" % (name.encode(), *key, _NO_LOG if header is None else line)
        for name, (key, header, line) in entries.items()
    )
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir(path.parent)  # never the data directory: it exists, it was just listed
        if not stat.S_ISDIR(os.lstat(path.parent).st_mode):
            raise NotADirectoryError(f"{path.parent} is a link, not a directory")
        replace_file(path, head + body)
    except OSError as exc:
        log.debug("header cache %s not written: %s", path, exc)
