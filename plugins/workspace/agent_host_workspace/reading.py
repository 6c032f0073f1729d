"""``read_file`` and ``list_files``: what the workspace holds, never changing it.

Files are opened through ``host.project_files`` (``open_regular``): a directory, device, FIFO
or socket is refused before it is opened, so reading never blocks or has effects.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from agent_host_workspace.base import Refused
from agent_host_workspace.paths import Root
from agent_host_workspace.walk import Stop, compile_glob, walk
from host.api import FileRefused, open_regular

MAX_LINE_CHARS = 2000
MAX_LINE_BYTES = 4 * MAX_LINE_CHARS + 2
"""What is held of one line: ``MAX_LINE_CHARS`` characters of any UTF-8 text and more."""
SKIP_CHUNK_BYTES = 1 << 16
MAX_READ_BYTES = 256 * 1024
"""The cap on the lines ``read_file`` returns, in bytes of UTF-8 (the note after them aside)."""
BINARY_PROBE_BYTES = 8192
MAX_LISTED = 100
MAX_MATCHES = 10_000


def read_lines(root: Root, path: str, offset: int, limit: int) -> str:
    """Lines ``offset`` (1-based) to ``offset + limit - 1`` of ``path``, numbered as ``cat -n``
    numbers them; at most ``MAX_READ_BYTES`` of lines, each longer than ``MAX_LINE_CHARS``
    cut (and never held whole). ``Refused`` for a path outside the root, a missing, binary or
    not regular file."""
    if offset < 1 or limit < 1:
        raise Refused("offset and limit must be at least 1")
    real = root.resolve(path)
    fd = _open(real, path)
    with os.fdopen(fd, "rb") as stream:
        if b"\x00" in stream.read(BINARY_PROBE_BYTES):
            raise Refused(f"{path}: is a binary file; read_file shows text only")
        stream.seek(0)
        return _numbered(stream, path, offset, limit)


def _open(real: Path, path: str) -> int:
    try:
        fd = open_regular(real)
    except FileRefused as refused:
        raise Refused(f"{path}: {refused.reason}") from None
    if fd is None:
        raise Refused(f"{path}: no such file")
    return fd


def _numbered(stream: BinaryIO, path: str, offset: int, limit: int) -> str:
    """The numbered window of ``stream`` (a binary file) and how to read on."""
    lines: list[str] = []
    size = 0
    number = skipped = _skip_lines(stream, offset - 1)
    for number, (kept, cut) in enumerate(_lines(stream), skipped + 1):
        line = f"{number:>6}\t{_shown(kept, cut)}"
        size += len(line.encode("utf-8")) + 1
        if len(lines) == limit or size > MAX_READ_BYTES:
            more = f"{path} continues after line {number - 1}; read on with offset={number}"
            return "\n".join([*lines, f"({more})"])
        lines.append(line)
    if not lines:
        return f"({path} has {number} lines; nothing at offset {offset})"
    return "\n".join(lines)


def _skip_lines(stream: BinaryIO, count: int) -> int:
    """Read past the first ``count`` lines of ``stream``, a chunk at a time however long they
    are; how many lines there were, up to ``count``."""
    skipped = 0
    tail = b"\n"
    while skipped < count and (chunk := stream.read(SKIP_CHUNK_BYTES)):
        tail = chunk[-1:]
        found = chunk.count(b"\n")
        if skipped + found >= count:
            end = -1
            for _ in range(count - skipped):
                end = chunk.index(b"\n", end + 1)
            stream.seek(end + 1 - len(chunk), os.SEEK_CUR)
            return count
        skipped += found
    return skipped if tail == b"\n" else skipped + 1  # a last line without a newline


def _lines(stream: BinaryIO) -> Iterator[tuple[bytes, bool]]:
    """Each line of ``stream``: its first ``MAX_LINE_BYTES`` bytes, and whether more than
    line-end characters followed them (the rest is read past, never held)."""
    while kept := stream.readline(MAX_LINE_BYTES):
        if kept.endswith(b"\n") or len(kept) < MAX_LINE_BYTES:
            yield kept, False
        else:
            yield kept, _skip_line(stream)


def _skip_line(stream: BinaryIO) -> bool:
    """Read past the rest of the current line, a chunk at a time; whether it held anything
    but ``\\r`` and ``\\n``."""
    more = False
    while chunk := stream.readline(SKIP_CHUNK_BYTES):
        more = more or bool(chunk.strip(b"\r\n"))
        if chunk.endswith(b"\n"):
            break
    return more


def _shown(kept: bytes, cut: bool) -> str:
    """A line as ``read_file`` shows it: its line end removed, cut at ``MAX_LINE_CHARS``."""
    text = kept.decode("utf-8", "replace")
    if not cut:
        text = text.rstrip("\r\n")
    if len(text) > MAX_LINE_CHARS:
        text = text[:MAX_LINE_CHARS] + f" … (line cut at {MAX_LINE_CHARS} characters)"
    return text


def list_matching(root: Root, glob: str, path: str | None, stop: Stop) -> str:
    """The files under ``path`` (default: the root) whose path relative to the root matches
    ``glob`` (a ``.gitignore``-style pattern), newest first, at most ``MAX_LISTED`` shown;
    ``Refused`` when more than ``MAX_MATCHES`` match."""
    pattern = compile_glob(glob)
    start = root.resolve(path or ".")
    if not start.is_dir():
        raise Refused(f"{path or '.'}: is not a directory")
    found: list[tuple[float, str]] = []
    for file in walk(str(start), stop):
        relative = root.relative(file)
        if not pattern.match_file(relative):
            continue
        if len(found) == MAX_MATCHES:
            raise Refused(
                f"more than {MAX_MATCHES} files match {glob!r}; narrow the glob or the path"
            )
        try:
            found.append((-os.stat(file).st_mtime, relative))
        except OSError:
            continue  # gone since it was listed
    if not found:
        return f"no files match {glob!r}"
    found.sort()
    shown = [name for _, name in found[:MAX_LISTED]]
    if len(found) > MAX_LISTED:
        shown.append(f"({len(found)} files match; the {MAX_LISTED} newest are shown)")
    return "\n".join(shown)
