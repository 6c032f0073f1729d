"""The root an MCP client speaks as: named by ``--root``, or one per working directory.

The root is a held agent (``Agent.hold``): reports and settlement notices from its subagents
are accepted into its log as they are for any parent, but no model answers them; the client
reads them with ``read_agent_messages``. Its session is created on first use and resumed by
the next server process (``Commands.open``); a second process on the same root is refused
with ``LOCKED``.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import TYPE_CHECKING

from host.api import SESSION_ID_PATTERN, Commands, HostError

if TYPE_CHECKING:
    from host.api import Agent, RunningHost

PREFIX = "mcp-"
"""How a default root's id begins."""


def root_id(name: str | None, cwd: Path) -> str:
    """The root's session id: ``name`` as given (a valid session id), else
    ``mcp-<directory name>-<8 hex digits of its path>`` for the working directory."""
    if name is not None:
        if SESSION_ID_PATTERN.fullmatch(name) is None:
            raise HostError(
                "BAD_ROOT",
                f"invalid root name {name!r}: use 1-64 letters, digits, _ or -, "
                "starting with a letter or digit",
            )
        return name
    digest = hashlib.sha256(str(cwd.resolve()).encode()).hexdigest()[:8]
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", cwd.resolve().name).strip("-_")[:40] or "root"
    return f"{PREFIX}{slug}-{digest}"


async def open_root(host: RunningHost, thread_id: str) -> Agent:
    """The held root ``thread_id``: resumed when stored, else created (``LOCKED`` when
    another process serves it)."""
    return await Commands(host).open(thread_id, held=True)
