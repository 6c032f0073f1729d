"""Reading a JSONL session log from bytes: the header, the valid prefix, and what follows it.

The valid prefix is the header line plus every following complete line that decodes as the
event with the next ``seq``. It ends at the first line that does not (garbage, a wrong
``seq``, an empty line) or at a last line lacking its newline (a torn write). Whatever follows
is *ignored*. If any complete line from the damage on is still a well-formed event (even one
with the wrong ``seq``), the damage is not a torn write but sits in the middle of the log
(``damaged_middle``); otherwise the ignored bytes are a torn tail.
"""

from __future__ import annotations

import os

import attrs

from host.sessions.codec import CodecError, decode_event, decode_event_lines, decode_header
from host.sessions.model import Event, SessionHeader

HEADER_SCAN_LIMIT = 1 << 20
"""A header line longer than this is not read (the file is not a session log)."""


@attrs.frozen
class ParsedLog:
    """The outcome of reading one log: see the module docstring."""

    header: SessionHeader
    events: list[Event] = attrs.field(repr=lambda events: f"<{len(events)} events>")
    valid_bytes: int
    ignored_bytes: int
    damaged_middle: bool


def parse_header_line(data: bytes) -> tuple[SessionHeader, int]:
    """The header and the length of its line (newline included); ``CodecError`` if none."""
    end = data.find(b"\n")
    if end < 0:
        raise CodecError("no complete header line")
    return decode_header(data[:end]), end + 1


def parse_log(data: bytes) -> ParsedLog:
    """Parse a whole log; ``CodecError`` if it has no valid header line."""
    header, start = parse_header_line(data)
    lines = data.split(b"\n")  # split in place: no copy of everything after the header
    del lines[0]  # the header line
    tail = lines.pop()  # b"" when the file ends with a newline, else a torn line
    events, bad = decode_event_lines(lines)
    if bad == len(lines):
        valid = len(data) - len(tail)
        return ParsedLog(header, events, valid, len(tail), False)
    valid = start + sum(len(line) + 1 for line in lines[:bad])
    return ParsedLog(header, events, valid, len(data) - valid, _any_event(lines[bad:]))


def _any_event(lines: list[bytes]) -> bool:
    for line in lines:
        try:
            decode_event(line)
        except CodecError:
            continue
        return True
    return False


def read_head(fd: int, limit: int = HEADER_SCAN_LIMIT) -> bytes:
    """The first bytes of the file, up to and including the first newline (or ``limit``)."""
    chunks: list[bytes] = []
    offset = 0
    size = 4096
    while offset < limit:
        chunk = os.pread(fd, size, offset)
        if not chunk:
            break
        newline = chunk.find(b"\n")
        if newline >= 0:
            chunks.append(chunk[: newline + 1])
            break
        chunks.append(chunk)
        offset += len(chunk)
        size = min(size * 4, 1 << 20)
    return b"".join(chunks)


def read_last_line(fd: int, size: int) -> bytes:
    """The last complete line of a file of ``size`` bytes that ends with a newline."""
    block = 4096
    while True:
        start = max(0, size - 1 - block)
        data = os.pread(fd, size - 1 - start, start)
        newline = data.rfind(b"\n")
        if newline >= 0:
            return data[newline + 1 :]
        if start == 0:
            return data
        block *= 4
