"""The app-server: JSON-RPC methods over the client-facing layer (``host.clients``).

Every method is a thin adapter: ``Commands`` acts, ``Feed`` tells each connection what
happens to the threads it follows (``thread/start`` and ``thread/resume`` follow the thread
they return), ``Asker`` puts requests to the user to capable clients. ``METHODS`` names each
method's params class; ``host.appserver.schema`` documents them from the same classes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from host.appserver import protocol as p
from host.appserver.asking import Asker
from host.clients.catalog import catalog
from host.clients.commands import ClientError, Commands
from host.clients.feed import Feed

if TYPE_CHECKING:
    from host.agents.agent import Agent
    from host.app import Host
    from host.appserver.connection import Connection, Handler
    from host.disposal import Disposer


class AppServer:
    """The methods, the connections and the layer they share."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.commands = Commands(host)
        self.feed = Feed(host)
        self.connections: set[Connection] = set()
        self.asker = Asker(self.connections)
        self.methods: dict[str, tuple[type, Handler]] = {
            name: (kind, getattr(self, attribute)) for name, (kind, _, attribute) in METHODS.items()
        }
        self._stops: list[Disposer] = []
        approvals = host.services.find("approvals")
        if approvals is not None:
            self._stops.append(approvals.on_request(self.asker, per_root=True))

    def connect(self, connection: Connection) -> None:
        """A new client."""
        self.connections.add(connection)

    def gone(self, connection: Connection) -> None:
        """A client left."""
        self.connections.discard(connection)

    def close(self) -> None:
        """Stop the feed and the approvals handler (the host is closed by the caller)."""
        for stop in reversed(self._stops):
            stop()
        self.feed.close()

    async def _follow(self, connection: Connection, thread_id: str, after: int | None) -> None:
        """Follow ``thread_id`` for ``connection``; it counts as following at once, so a
        request to the user made while the stored log is read is asked of it too. A thread
        already followed is followed again when ``after`` asks for a replay (the old follow
        stops first, with no await between: nothing live is lost or heard twice). A follow
        replaced, unsubscribed or closed while it was being set up stops when it is set up:
        the last request wins, and no follow outlives the connection."""
        if thread_id in connection.follows and after is None:
            self.asker.following(connection, thread_id)
            return
        connection.follows.pop(thread_id, _nothing)()

        def setting_up() -> None:
            """This call's mark in ``follows`` until its follow is set up."""

        connection.follows[thread_id] = setting_up
        try:
            stop = await self.feed.follow(thread_id, connection.notify, after_seq=after)
        except BaseException:
            if connection.follows.get(thread_id) is setting_up:
                del connection.follows[thread_id]
            raise
        if connection.follows.get(thread_id) is setting_up:
            connection.follows[thread_id] = stop
            self.asker.following(connection, thread_id)
        else:
            stop()

    # -- methods ---------------------------------------------------------------------------

    async def thread_start(self, connection: Connection, params: p.ThreadStartParams) -> Any:
        """A new root; the connection follows it."""
        agent = await self.commands.start(
            label=params.label, model=params.model, profile=params.profile
        )
        await self._follow(connection, agent.id, None)
        return self._thread_result(agent)

    async def thread_resume(self, connection: Connection, params: p.ThreadResumeParams) -> Any:
        """A stored root made live; followed, replaying after ``afterSeq``."""
        agent = await self.commands.resume(params.thread_id)
        await self._follow(connection, agent.id, params.after_seq)
        return self._thread_result(agent)

    def _thread_result(self, agent: Agent) -> p.ThreadResult:
        header = agent.session.header
        last = len(agent.session.events) - 1
        running = self.feed.turn(agent.id) is not None
        return p.ThreadResult(p.Thread(agent.id, agent.label, header.created_at), last, running)

    async def thread_list(self, connection: Connection, params: p.ThreadListParams) -> Any:
        """Roots, the most recently active first, a page at a time: the cursor is the last
        row's place (its activity and id), so a thread active meanwhile moves nothing."""
        after = _cursor(params.cursor)
        page, more = await self.commands.threads.page(after, max(1, min(params.limit, 500)))
        threads = [
            p.ListedThread(
                r.header.id, r.header.label, r.header.created_at, r.last_activity, r.live
            )
            for r in page
        ]
        return p.ThreadListResult(threads, _place(page[-1].order()) if more else None)

    async def thread_read(self, connection: Connection, params: p.ThreadReadParams) -> Any:
        """Any session's items after ``afterSeq``."""
        read = await self.commands.read(
            params.thread_id, after_seq=params.after_seq, limit=params.limit
        )
        return p.ThreadReadResult(read.items, read.last_seq)

    async def thread_subscribe(
        self, connection: Connection, params: p.ThreadSubscribeParams
    ) -> Any:
        """Follow any session read-only."""
        await self.commands.header(params.thread_id)
        await self._follow(connection, params.thread_id, params.after_seq)
        return p.Empty()

    async def thread_unsubscribe(self, connection: Connection, params: p.ThreadIdParams) -> Any:
        """Stop following."""
        stop = connection.follows.pop(params.thread_id, None)
        if stop is not None:
            stop()
        return p.Empty()

    async def turn_start(self, connection: Connection, params: p.TurnParams) -> Any:
        """A followup: the root's next turn, named before it starts."""
        text = _text(params)
        message_id, turn_id = await self.commands.followup(params.thread_id, text)
        return p.TurnStartResult(p.Turn(turn_id), message_id)

    async def turn_steer(self, connection: Connection, params: p.TurnParams) -> Any:
        """A steer: joins the running turn."""
        text = _text(params)
        return p.TurnResult(await self.commands.steer(params.thread_id, text))

    async def turn_interrupt(self, connection: Connection, params: p.ThreadIdParams) -> Any:
        """Stop the root's current turn."""
        await self.commands.interrupt(params.thread_id)
        return p.Empty()

    async def subagent_list(self, connection: Connection, params: p.SubagentListParams) -> Any:
        """The root's subagents as ``list_agents`` lists them."""
        text, rows = await self.commands.subagents(params.thread_id, params.scope)
        return p.SubagentListResult(text, rows)

    async def subagent_send(self, connection: Connection, params: p.SubagentSendParams) -> Any:
        """A message to a direct subagent, as ``send_message``."""
        message_id = await self.commands.send(params.thread_id, params.subagent_id, params.text)
        text = f"message queued as the next turn for subagent {params.subagent_id}"
        return p.SubagentSendResult(text, message_id)

    async def subagent_interrupt(
        self, connection: Connection, params: p.SubagentInterruptParams
    ) -> Any:
        """Stop a descendant's turn, as ``interrupt_agent``."""
        await self.commands.interrupt_subagent(params.thread_id, params.subagent_id)
        text = f"interrupt requested for agent {params.subagent_id}"
        return p.SubagentInterruptResult(text, True)

    async def plugins_list(self, connection: Connection, params: p.NoParams) -> Any:
        """The plugins and their states."""
        return p.RowsResult(self.host.plugin_rows())

    async def tools_list(self, connection: Connection, params: p.NoParams) -> Any:
        """The tools a root agent can call."""
        return p.RowsResult(catalog(self.host, "root"))

    async def models_list(self, connection: Connection, params: p.NoParams) -> Any:
        """The registered models and the default."""
        models = self.host.services.models
        return p.ModelsResult(list(models.names()), models.default_name)


METHODS: dict[str, tuple[type, type, str]] = {
    "thread/start": (p.ThreadStartParams, p.ThreadResult, "thread_start"),
    "thread/resume": (p.ThreadResumeParams, p.ThreadResult, "thread_resume"),
    "thread/list": (p.ThreadListParams, p.ThreadListResult, "thread_list"),
    "thread/read": (p.ThreadReadParams, p.ThreadReadResult, "thread_read"),
    "thread/subscribe": (p.ThreadSubscribeParams, p.Empty, "thread_subscribe"),
    "thread/unsubscribe": (p.ThreadIdParams, p.Empty, "thread_unsubscribe"),
    "turn/start": (p.TurnParams, p.TurnStartResult, "turn_start"),
    "turn/steer": (p.TurnParams, p.TurnResult, "turn_steer"),
    "turn/interrupt": (p.ThreadIdParams, p.Empty, "turn_interrupt"),
    "subagent/list": (p.SubagentListParams, p.SubagentListResult, "subagent_list"),
    "subagent/send": (p.SubagentSendParams, p.SubagentSendResult, "subagent_send"),
    "subagent/interrupt": (
        p.SubagentInterruptParams, p.SubagentInterruptResult, "subagent_interrupt"
    ),
    "plugins/list": (p.NoParams, p.RowsResult, "plugins_list"),
    "tools/list": (p.NoParams, p.RowsResult, "tools_list"),
    "models/list": (p.NoParams, p.ModelsResult, "models_list"),
}
"""Each method's params class, result class and handler (``initialize`` is the
connection's own: ``host.appserver.connection``)."""


def _nothing() -> None:
    """The disposer of a follow still being set up."""


def _text(params: p.TurnParams) -> str:
    text = "\n".join(piece.text for piece in params.input)
    if not text.strip():
        raise ClientError("INVALID_INPUT", "input is empty")
    return text


def _place(order: tuple[int, str]) -> str:
    """A ``thread/list`` cursor: after the row at ``order``."""
    return f"{order[0]}:{order[1]}"


def _cursor(cursor: str | None) -> tuple[int, str] | None:
    if cursor is None:
        return None
    moment, _, thread_id = cursor.partition(":")
    if not moment.isdigit() or not thread_id:
        raise ClientError("INVALID_CURSOR", f"invalid cursor {cursor!r}")
    return int(moment), thread_id
