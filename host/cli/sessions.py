"""``agent-host sessions list|show ID|tree``: the stored sessions, read without locking.

Reads go through the ``session_persistence`` service's ``list`` and ``inspect``, which never
write: looking at a session that another host is running is safe.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from host.app import Host
from host.cli import render
from host.cli.transcript import short
from host.errors import HostError

if TYPE_CHECKING:
    from host.sessions.model import SessionHeader


def add_parser(commands: Any) -> None:
    """Register ``sessions`` and its three sub-commands."""
    sessions = commands.add_parser("sessions", help="list, show and draw stored sessions")
    which = sessions.add_subparsers(dest="sessions_command", required=True, metavar="ACTION")
    listing = which.add_parser("list", help="every stored session")
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")
    show = which.add_parser("show", help="one session's transcript")
    show.add_argument("session_id", metavar="ID", help="the session")
    show.add_argument("--json", action="store_true", help="print JSON instead of lines")
    which.add_parser("tree", help="sessions drawn under their parents")


def _persistence(host: Host) -> Any:
    persistence = host.services.find("session_persistence")
    if persistence is None:
        raise HostError("SERVICE_UNAVAILABLE", "no session persistence (is it blocked?)")
    return persistence


def _when(header: SessionHeader) -> str:
    return _moment(header.created_at)


def _moment(ns: int) -> str:
    import datetime

    moment = datetime.datetime.fromtimestamp(ns / 1e9, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def _table(persistence: Any, headers: list[SessionHeader]) -> str:
    """``sessions list``: each session's kind (``root`` — a conversation ``chat --resume``
    takes —, ``subagent`` or ``fork``) and, for a root, its tree's last activity."""
    from host.sessions.activity import is_root, last_activity

    latest = last_activity(persistence, headers)
    rows = []
    for h in headers:
        kind = "root" if is_root(h) else (h.origin or "fork")
        active = _moment(latest[h.id]) if h.id in latest else ""
        rows.append([h.id, kind, _when(h), active, h.parent_session or ""])
    columns = ["session", "kind", "created", "last activity", "parent"]
    return render.table(columns, rows) if rows else "(no sessions)"


async def run(host: Host, args: argparse.Namespace) -> int:
    """Run the chosen ``sessions`` action."""
    from host.cli.style import Style
    from host.cli.transcript import render_events
    from host.serialization import unstructure

    persistence = _persistence(host)
    if args.sessions_command == "show":
        stored = await persistence.inspect(args.session_id)
        if args.json:
            events = [{"seq": e.seq, **unstructure(e.body)} for e in stored.events]
            document = [{"header": unstructure(stored.header), "events": events}]
            print(render.to_json_document(document))
        else:
            print(f"session {stored.header.id} ({_when(stored.header)})")
            print("\n".join(render_events(stored.events, Style.for_stream())))
        return 0
    headers = await persistence.list()
    if args.sessions_command == "list":
        if args.json:
            print(render.to_json([unstructure(h) for h in headers]))
        else:
            print(_table(persistence, headers))
        return 0
    notes = await subagent_notes(host, headers)
    print("\n".join(tree_lines(headers, notes)) or "(no sessions)")
    return 0


async def subagent_notes(host: Host, headers: list[SessionHeader]) -> dict[str, str]:
    """``id → annotation`` for subagent sessions: mode and label, or the diagnostic.

    Judged by the subagent service's catalog (the identity rule, read-only), one walk per
    root; empty when the service is blocked.
    """
    subagents = host.services.find("subagents")
    if subagents is None:
        return {}
    known = {h.id for h in headers}
    notes: dict[str, str] = {}
    for root in (h for h in headers if h.parent_session not in known):
        for entry in await subagents.list_descendants(root.id):
            if entry.kind == "child":
                label = f" — {entry.label}" if entry.label else ""
                notes[entry.id] = f"[{entry.mode}]{label}"
            else:
                notes[entry.id] = f"[diagnostic: {entry.reason}]"
    return notes


def tree_lines(headers: list[SessionHeader], notes: dict[str, str] | None = None) -> list[str]:
    """Sessions under their parents, roots first, in creation order; cycles are cut.

    Subagent sessions carry their ``notes`` (mode and label, or a diagnostic) on one line, a
    line break shown as ``⏎`` as ``sessions show`` does; ordinary forks are marked ``[fork]``.
    """
    notes = notes or {}
    known = {h.id for h in headers}
    children: dict[str | None, list[SessionHeader]] = defaultdict(list)
    for header in sorted(headers, key=lambda h: h.sort_key()):
        parent = header.parent_session if header.parent_session in known else None
        children[parent].append(header)
    lines: list[str] = []
    seen: set[str] = set()
    stack = [(h, 0) for h in reversed(children[None])]
    while stack:
        header, depth = stack.pop()
        if header.id in seen:
            continue
        seen.add(header.id)
        note = short(notes.get(header.id) or "") or (
            "[fork]" if header.seed_length and not header.origin else ""
        )
        lines.append(f"{'  ' * depth}{header.id}{' ' + note if note else ''}")
        stack.extend((child, depth + 1) for child in reversed(children[header.id]))
    return lines
