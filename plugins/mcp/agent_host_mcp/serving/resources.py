"""Each subagent below the root as a resource, ``agent://<id>/transcript``.

Reading one gives the subagent's transcript items (``host.clients.items``) as JSON, from its
live session or its stored log. ``resources/subscribe`` to one sends
``notifications/resources/updated`` each time its log grows; every client hears
``notifications/resources/list_changed`` when a subagent starts or settles (the feed's
``subagent/*`` events, ``host.clients.feed``).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Coroutine, Sequence
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from agent_host_mcp.serving.asking import client_key
from host.api import (
    ClientEvent,
    Commands,
    Feed,
    SubagentStarted,
    SubagentStatus,
    unstructure,
)

if TYPE_CHECKING:
    from mcp.server.session import ServerSession

    from host.api import Agent, Disposer, Event, RunningHost, Session

URI = re.compile(r"agent://([A-Za-z0-9][A-Za-z0-9_-]{0,63})/transcript")
MIME = "application/json"


def uri_of(agent_id: str) -> str:
    """The transcript resource of ``agent_id``."""
    return f"agent://{agent_id}/transcript"


class Resources:
    """The transcripts of the root's subagents (module docstring); ``start``, then ``close``."""

    def __init__(self, host: RunningHost, root: Agent) -> None:
        self._host = host
        self._root = root
        self._commands = Commands(host)
        self._feed = Feed(host)
        self._clients: dict[int, ServerSession] = {}
        self._subscribed: dict[str, dict[int, ServerSession]] = {}
        self._sending: set[asyncio.Task[None]] = set()
        self._stops: list[Disposer] = []

    async def start(self) -> None:
        """Hear the root's tree and every append."""
        self._stops.append(await self._feed.follow(self._root.id, self._event, after_seq=None))
        self._stops.append(self._host.services.sessions.observe(self._appended))

    def close(self) -> None:
        """Stop hearing, stop sending."""
        for stop in reversed(self._stops):
            stop()
        self._feed.close()
        for task in self._sending:
            task.cancel()

    def seen(self, session: ServerSession) -> None:
        """A client that hears ``list_changed``."""
        self._clients[client_key(session)] = session

    async def list(self) -> list[types.Resource]:
        """A resource per subagent below the root, parents first."""
        _text, rows = await self._commands.subagents(self._root.id, "descendants")
        return [
            types.Resource(
                uri=uri_of(row["id"]), name=row.get("label") or row["id"], mime_type=MIME,
                description=f"the transcript of subagent {row['id']} ({row['status']})",
            )
            for row in rows
            if row["kind"] == "child"
        ]

    async def read(self, uri: str) -> str:
        """The transcript ``uri`` names, as JSON; ``MCPError`` for anything not below the
        root."""
        agent_id = await self._below_root(uri)
        transcript = await self._commands.read(agent_id)
        items = unstructure(transcript.items)
        return json.dumps({"items": items, "last_seq": transcript.last_seq}, ensure_ascii=False)

    async def subscribe(self, session: ServerSession, uri: str) -> None:
        """Send ``updated`` for ``uri`` to this client as it grows."""
        await self._below_root(uri)
        self._subscribed.setdefault(uri, {})[client_key(session)] = session

    def unsubscribe(self, session: ServerSession, uri: str) -> None:
        """Stop sending ``updated`` for ``uri`` to this client."""
        self._subscribed.get(uri, {}).pop(client_key(session), None)

    async def _below_root(self, uri: str) -> str:
        matched = URI.fullmatch(uri)
        if matched is not None:
            _text, rows = await self._commands.subagents(self._root.id, "descendants")
            if any(row["id"] == matched.group(1) for row in rows):
                return matched.group(1)
        raise MCPError(types.INVALID_PARAMS, f"no resource {uri!r}: not a subagent of this root")

    def _event(self, event: ClientEvent) -> None:
        if isinstance(event, SubagentStarted) or (
            isinstance(event, SubagentStatus) and event.status == "settled"
        ):
            for key, session in list(self._clients.items()):
                self._send(self._clients, key, session.send_resource_list_changed())

    def _appended(self, session: Session, events: Sequence[Event]) -> None:
        uri = uri_of(session.id)
        for key, client in list(self._subscribed.get(uri, {}).items()):
            self._send(self._subscribed[uri], key, client.send_resource_updated(uri))

    def _send(
        self, clients: dict[int, ServerSession], key: int, sending: Coroutine[Any, Any, None]
    ) -> None:
        """Send in the background; a client that cannot be sent to is forgotten."""

        async def send() -> None:
            try:
                await sending
            except Exception:
                clients.pop(key, None)

        task = asyncio.get_running_loop().create_task(send())
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

