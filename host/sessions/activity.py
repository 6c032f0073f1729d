"""Which sessions are root conversations, and when each root's tree was last active: shared by
``sessions list``, ``chat --continue`` and the app-server's ``thread/list``."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from typing import Any

from host.errors import HostError
from host.sessions.model import SessionHeader


def is_root(header: SessionHeader) -> bool:
    """Whether ``header`` is a root conversation (no parent: not a subagent, not a fork)."""
    return header.parent_session is None and not header.origin


def last_activity(persistence: Any, headers: Sequence[SessionHeader]) -> dict[str, int]:
    """Each root conversation's last activity (ns since the epoch): the newest write among
    the logs of its tree where the backend keeps files (JSONL: ``path_for``, their mtime),
    else the newest session created in it."""
    by_id = {header.id: header for header in headers}
    latest: dict[str, int] = {}
    for header in headers:
        root = by_id[root_of(header, by_id)]
        if not is_root(root):
            continue
        moment = written_at(persistence, header)
        latest[root.id] = max(latest.get(root.id, moment), moment)
    return latest


def written_at(persistence: Any, header: SessionHeader) -> int:
    """When ``header``'s session was last written (ns since the epoch): its log's mtime where
    the backend keeps files (JSONL: ``path_for``), else (or unreadable) its creation."""
    path_for = getattr(persistence, "path_for", None)
    moment = header.created_at
    if path_for is not None:
        with contextlib.suppress(OSError, HostError):  # unreadable: its creation
            moment = max(moment, os.stat(path_for(header.id)).st_mtime_ns)
    return moment


def root_of(header: SessionHeader, by_id: dict[str, SessionHeader]) -> str:
    """The topmost stored ancestor of ``header`` (cycles cut)."""
    seen = {header.id}
    while (parent := by_id.get(header.parent_session or "")) is not None and parent.id not in seen:
        header = parent
        seen.add(parent.id)
    return header.id
