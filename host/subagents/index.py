"""The identity index: a derived, rebuildable cache of settled children's identity verdicts.

One file per data directory (the service passes its path, e.g.
``<data_dir>/.index/identity.jsonl``). It is JSON Lines, one row per line, the last row of an id
winning::

    {"id":"c1","fp":"<header fingerprint>","seq":3,"v":1,"verdict":"identity",
     "mode":"continuable","provider":"spawn","label":"research"}
    {"id":"c2","fp":"…","seq":5,"v":1,"verdict":"corrupt"}
    {"id":"c3","drop":true}

A row is **trusted** only when its ``seq >= header.seed_length``, its fingerprint (a stable hash
of every header field) matches the header the listing enumerated, and ``v`` is the identity
unit's version. Anything else — no file, an unreadable file, a garbage or torn line, a missing,
stale or dropped row — is a miss, and the caller falls back to one ``inspect`` of the child.
The index never raises: a failed read is an empty index and a failed write is skipped, so
deleting or damaging it changes no listing result, only its speed.

Writes append one line with one ``os.write`` (``O_APPEND``), so concurrent writers in several
processes do not interleave lines. When most lines are superseded the file is rewritten
atomically (temporary file + ``os.replace``); a row another process appended during that
rewrite may be lost, which again costs only speed. The index is never fsynced.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import stat
from pathlib import Path
from typing import Any

from host.atomic import replace_file
from host.project_files import FileRefused, open_regular
from host.sessions.model import SessionHeader
from host.subagents.identity import (
    IDENTITY_UNIT_VERSION,
    Identity,
    IdentityProblem,
    judge_descriptor,
)

log = logging.getLogger(__name__)

Row = tuple[str, int, int, Identity | IdentityProblem]
"""A loaded row: fingerprint, seq, unit version, verdict."""

_COMPACT_MIN_LINES = 256

INDEX_BYTES = 64 << 20
"""The largest index file read. A row takes about 130 to 250 bytes and compaction keeps at
most about two lines per child, so a real index stays far below (over 100,000 children). A
larger file (a repository may commit a sparse one of many GB) is not read: it is treated as
an unreadable index, one warning and listings inspect the children's logs."""


def fingerprint(header: SessionHeader) -> str:
    """A stable hash of every field of ``header`` (the same header always gives the same)."""
    text = (
        f"{header.id}\x1f{header.parent_session!r}\x1f{header.created_at}\x1f"
        f"{header.origin!r}\x1f{header.delegation_depth}\x1f{header.seed_length}"
    )
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def _row_json(session_id: str, fp: str, verdict: Identity | IdentityProblem, version: int) -> str:
    data: dict[str, Any] = {"id": session_id, "fp": fp, "seq": verdict.seq, "v": version}
    if isinstance(verdict, Identity):
        data.update(
            verdict="identity", mode=verdict.mode, provider=verdict.provider, label=verdict.label
        )
    else:
        data["verdict"] = verdict.reason
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def _parse_row(line: bytes) -> tuple[str, Row | None] | None:
    """``(id, row)``, ``(id, None)`` for a drop row, or ``None`` for a line that is no row."""
    try:
        data = json.loads(line)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("id"), str):
        return None
    if data.get("drop") is True:
        return data["id"], None
    fp, seq, version, kind = data.get("fp"), data.get("seq"), data.get("v"), data.get("verdict")
    if not isinstance(fp, str) or type(seq) is not int or type(version) is not int:
        return None
    verdict: Identity | IdentityProblem
    if kind in ("corrupt", "unsupported"):
        verdict = IdentityProblem(kind, seq)
    elif kind == "identity":
        mode, provider, label = data.get("mode"), data.get("provider"), data.get("label")
        if mode not in ("one-shot", "continuable") or not isinstance(provider, str):
            return None
        if not (label is None or isinstance(label, str)):
            return None
        verdict = Identity(mode=mode, label=label, provider=provider, seq=seq)
    else:
        return None
    return data["id"], (fp, seq, version, verdict)


class IdentityIndex:
    """The identity index file at ``path`` (module docstring). Safe to share in one process."""

    def __init__(self, path: Path, *, unit_version: int = IDENTITY_UNIT_VERSION) -> None:
        self.path = Path(path)
        self.unit_version = unit_version
        self._rows: dict[str, Row] = {}
        self._stat: tuple[int, int] | None = None  # (inode, bytes consumed)
        self._lines = 0
        self._problem: str | None = None

    # -- reading ---------------------------------------------------------------------------

    def lookup(
        self, header: SessionHeader, *, refresh: bool = True
    ) -> Identity | IdentityProblem | None:
        """The trusted verdict for ``header``'s session, or ``None`` (a miss: inspect it).

        ``refresh=False`` skips re-reading the file (after one ``refresh()`` for a batch).
        """
        if refresh:
            self.refresh()
        row = self._rows.get(header.id)
        if row is None:
            return None
        fp, seq, version, verdict = row
        if version != self.unit_version or seq < header.seed_length:
            return None
        if fp != fingerprint(header):
            return None
        return verdict

    def refresh(self) -> None:
        """Bring the in-memory rows up to date with the file (only what was appended since the
        last read, unless the file was replaced or shrank); never raises. A file that is the
        regular file last read, at the size read, is not opened: one ``stat`` tells."""
        if self._unchanged():
            return
        try:  # only a regular file: the data directory may lie in a project (host.project_files)
            fd = open_regular(self.path)
        except FileRefused as refused:
            self._reset(str(refused))
            return
        if fd is None:
            self._reset(None)
            return
        try:
            with os.fdopen(fd, "rb") as file:
                stat = os.fstat(fd)
                if stat.st_size > INDEX_BYTES:
                    self._reset(str(FileRefused.too_large(self.path, INDEX_BYTES)))
                    return
                cached = self._stat
                if cached is not None and cached[0] == stat.st_ino and cached[1] <= stat.st_size:
                    if cached[1] == stat.st_size:
                        return
                    file.seek(cached[1])
                    self._consume(file.read(stat.st_size - cached[1]), stat.st_ino, cached[1])
                    return
                self._rows = {}
                self._lines = 0
                self._consume(file.read(stat.st_size), stat.st_ino, 0)  # what grew: next time
        except OSError as exc:
            self._reset(f"{self.path} is unreadable: {exc}")
            return
        self._maybe_compact()

    def _unchanged(self) -> bool:
        """Whether the file is the regular file last read and has nothing more to read."""
        cached = self._stat
        if cached is None:
            return False
        try:
            info = os.stat(self.path)
        except OSError:
            return False
        return stat.S_ISREG(info.st_mode) and (info.st_ino, info.st_size) == cached

    def _reset(self, problem: str | None) -> None:
        """No rows (the file is missing, or ``problem`` says why it was not read: logged once
        while it stays the same)."""
        if problem is not None and problem != self._problem:
            log.warning("identity index %s", problem)
        self._problem = problem
        self._rows = {}
        self._stat = None
        self._lines = 0

    def _consume(self, data: bytes, inode: int, offset: int) -> None:
        end = data.rfind(b"\n") + 1  # a torn last line is read again once it is complete
        rows = self._rows
        for line in data[:end].split(b"\n"):
            if not line:
                continue
            self._lines += 1
            parsed = _parse_row(line)
            if parsed is None:
                continue
            session_id, row = parsed
            if row is None:
                rows.pop(session_id, None)
            else:
                rows[session_id] = row
        self._stat = (inode, offset + end)

    # -- writing ---------------------------------------------------------------------------

    def record(
        self, header: SessionHeader, descriptor: object, seq: int, *, new: bool = False
    ) -> None:
        """Note that ``header``'s session appended ``descriptor`` (raw JSON, a parsed
        descriptor or a verdict) at ``seq``; call it after every acknowledged descriptor append.

        A descriptor copied in a fork seed (``seq < seed_length``) is ignored. If the index
        already trusts a different own descriptor of the same session, the session now has
        two and the row becomes ``corrupt``. ``new``: the session was just created with a
        fresh id, so no row of it can exist and the file is not checked for one. Never raises.
        """
        if seq < header.seed_length:
            return
        verdict = judge_descriptor(descriptor, seq)
        known = None if new else self.lookup(header)
        if known is not None and known.seq is not None and known.seq != seq:
            verdict = IdentityProblem(
                "corrupt", max(seq, known.seq), "several own descriptors were recorded"
            )
        fp = fingerprint(header)
        self._append(_row_json(header.id, fp, verdict, self.unit_version))
        self._remember(header, verdict, fp)

    def store(self, header: SessionHeader, verdict: Identity | IdentityProblem) -> None:
        """Write back a verdict read from the session's log (listing does this after a cold
        read). Verdicts without a descriptor ``seq`` are not cached. Never raises."""
        if verdict.seq is None or verdict.seq < header.seed_length:
            return
        fp = fingerprint(header)
        self._append(_row_json(header.id, fp, verdict, self.unit_version))
        self._remember(header, verdict, fp)

    def invalidate(self, session_id: str) -> None:
        """Drop the row of ``session_id`` (e.g. just before appending another descriptor, so a
        crash between that append and ``record`` leaves a miss, not a stale row)."""
        self._append(json.dumps({"id": session_id, "drop": True}, separators=(",", ":")))
        self._rows.pop(session_id, None)

    def _remember(
        self, header: SessionHeader, verdict: Identity | IdentityProblem, fp: str
    ) -> None:
        assert verdict.seq is not None
        self._rows[header.id] = (fp, verdict.seq, self.unit_version, verdict)

    def _append(self, line: str) -> None:
        """Append ``line`` (a row the caller also keeps in memory). When the file held just
        what was read before, the line is counted as read: it is not read back."""
        data = (line + "\n").encode("utf-8")
        # Never through a link (a repository may commit the data directory), never into a
        # FIFO or device: the index is a regular file of ours or nothing is written.
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_NOFOLLOW
        try:
            try:
                fd = os.open(self.path, flags, 0o644)
            except FileNotFoundError:  # no directory yet
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path, flags, 0o644)
            try:
                info = os.fstat(fd)
                if not stat.S_ISREG(info.st_mode):
                    raise OSError(errno.EINVAL, "not a regular file")
                written = os.write(fd, data)
                if self._stat == (info.st_ino, info.st_size) and written == len(data):
                    self._read_own(fd, info.st_size + written)
            finally:
                os.close(fd)
        except OSError as exc:
            why = "it is a link" if exc.errno == errno.ELOOP else exc.strerror or str(exc)
            log.warning("cannot write identity index %s: %s", self.path, why)

    def _read_own(self, fd: int, end: int) -> None:
        """Count the line just appended at the end of what was read as read, if nothing else
        was appended meanwhile (the file ends at ``end``)."""
        info = os.fstat(fd)
        if info.st_size == end:
            self._stat = (info.st_ino, end)
            self._lines += 1

    def _maybe_compact(self) -> None:
        """Rewrite the file when most of its lines are superseded; never raises."""
        if self._lines < _COMPACT_MIN_LINES or self._lines <= 2 * len(self._rows):
            return
        body = "".join(
            _row_json(sid, fp, verdict, version) + "\n"
            for sid, (fp, _seq, version, verdict) in self._rows.items()
        ).encode("utf-8")
        try:
            replace_file(self.path, body)
            self._stat = (os.stat(self.path).st_ino, len(body))
            self._lines = len(self._rows)
        except OSError as exc:
            log.warning("cannot compact identity index %s: %s", self.path, exc)

    def __len__(self) -> int:
        """The number of rows currently known (after reading the file)."""
        self.refresh()
        return len(self._rows)
