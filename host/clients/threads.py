"""Threads as lists show them (``thread/list``): every root session, stored or live, the most
recently active first, a page at a time after a cursor (the place of a page's last row).

A thread's last activity is its tree's (``host.sessions.activity.last_activity``: on JSONL the
newest write among its logs, one ``stat`` each). A first page reads every log's time: its
order must be exact. Each time read is kept, and a page after a cursor reads only what it must,
because a time only grows: a thread last seen at or past the cursor stays there (a thread
active meanwhile moves to the top of a new first page, shifting nothing after the cursor), so
it is not read again; the others are taken newest first by the time last seen, each read again
as it is taken (one that moved past the cursor is dropped; the rows taken are ordered by what
was read). Read at every page: the trees live in this process (they are the ones written
here) and sessions never seen. So a page costs its own rows, and a stored tree written by
another process since the last first page is placed by its last time seen until it is taken.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

from host.sessions.activity import is_root, root_of, written_at
from host.sessions.model import SessionHeader

if TYPE_CHECKING:
    from host.services import Services


@attrs.frozen
class ThreadRow:
    """A root session as thread lists show it: its header, its tree's last activity (ns since
    the epoch: ``host.sessions.activity.last_activity``, else its creation) and whether it is
    live in this process."""

    header: SessionHeader
    last_activity: int
    live: bool

    def order(self) -> tuple[int, str]:
        """Its place in a list, newest activity last (ties by id)."""
        return self.last_activity, self.header.id


class ThreadList:
    """The threads of one host, a page at a time (module docstring); keeps the write time it
    last read of each session."""

    def __init__(self, services: Services) -> None:
        self._services = services
        self._seen: dict[str, int] = {}

    async def page(
        self, after: tuple[int, str] | None, limit: int
    ) -> tuple[list[ThreadRow], bool]:
        """Up to ``limit`` threads placed after the cursor ``after`` (None: from the newest),
        and whether more follow."""
        persistence = self._services.find("session_persistence")
        stored = await persistence.list() if persistence is not None else []
        live = self._services.sessions.list()
        headers = {h.id: h for h in [*stored, *live]}
        self._seen = {k: v for k, v in self._seen.items() if k in headers}
        trees = _trees(headers)
        live_ids = {h.id for h in live}
        agents = self._services.agents
        rows: list[ThreadRow] = []
        again: dict[str, list[SessionHeader]] = {}  # guessed: read again when taken
        for header in headers.values():
            if header.parent_session is not None:
                continue
            tree = trees.get(header.id, [])
            certain = after is None or any(h.id in live_ids for h in tree)
            moment = self._newest(persistence, tree, certain) if tree else header.created_at
            row = ThreadRow(header, moment, header.id in agents)
            if after is not None and row.order() >= after:
                continue  # past the cursor, and a time only grows
            rows.append(row)
            if not certain and tree:
                again[header.id] = tree
        rows.sort(key=ThreadRow.order, reverse=True)
        taken: list[ThreadRow] = []
        for row in rows:
            if len(taken) > limit:
                break
            guessed = again.get(row.header.id)
            if guessed is not None:
                row = attrs.evolve(row, last_activity=self._newest(persistence, guessed, True))
                if after is not None and row.order() >= after:
                    continue  # moved past the cursor meanwhile
            taken.append(row)
        taken.sort(key=ThreadRow.order, reverse=True)  # one read again may have moved up
        return taken[:limit], len(taken) > limit

    def _newest(self, persistence: Any, tree: Sequence[SessionHeader], read: bool) -> int:
        """The tree's last write: each log's time read now (``read``), else as last seen
        (read now only if never seen)."""
        moments = []
        for header in tree:
            moment = None if read else self._seen.get(header.id)
            if moment is None:
                moment = self._seen[header.id] = written_at(persistence, header)
            moments.append(moment)
        return max(moments)


def _trees(headers: dict[str, SessionHeader]) -> dict[str, list[SessionHeader]]:
    """The sessions of each root conversation's tree (``is_root``), by the root's id."""
    trees: dict[str, list[SessionHeader]] = {}
    for header in headers.values():
        root = headers[root_of(header, headers)]
        if is_root(root):
            trees.setdefault(root.id, []).append(header)
    return trees
