"""The MCP server of ``mcp serve``: the SDK's low-level ``Server`` with a handler per method,
each a thin adapter over ``tools``, ``mailbox``, ``asking``, ``progress`` and ``resources``.

Every request makes its client known (for elicitation and resource notifications); the
first also resumes the root's stored subagents a restart left waiting on the user, which ask
again now that someone can answer (``SubagentService.resume_waiting``). Nothing
beyond the five tools and the transcripts is served: no prompts, no completion, no way to
run a command, read a file or change configuration but what those tools do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions

from agent_host_mcp.serving import mailbox, tools
from agent_host_mcp.serving.asking import Elicitor
from agent_host_mcp.serving.progress import Progress
from agent_host_mcp.serving.resources import MIME, Resources
from host import __version__

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from host.api import Agent, Disposer, RunningHost

INSTRUCTIONS = (
    "Delegate work to agent-host subagents: start one with `subagent` (in the background by "
    "default), then read its reports and its settlement notice with `read_agent_messages` "
    "(pass `wait_seconds` to wait for them). Continue a subagent with `send_message`, stop its "
    "turn with `interrupt_agent`, list them with `list_agents`. Subagents, and what they "
    "sent you, last across sessions."
)


class Served:
    """One root behind the MCP protocol (module docstring); ``start``, then ``close``."""

    def __init__(self, host: RunningHost, root: Agent) -> None:
        self.host = host
        self.root = root
        self.mailbox = mailbox.Mailbox(root, host.services.sessions)
        self.elicitor = Elicitor()
        self.resources = Resources(host, root)
        self._stops: list[Disposer] = []
        self._woken = False
        self.server: Server[Any] = Server(
            "agent-host",
            version=__version__,
            instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_read_resource=self._read_resource,
            on_subscribe_resource=self._subscribe,
            on_unsubscribe_resource=self._unsubscribe,
        )

    async def start(self) -> None:
        """Route requests to the user here, hear the tree."""
        approvals = self.host.services.find("approvals")
        if approvals is not None:
            self._stops.append(approvals.on_request(self.elicitor, per_root=True))
        await self.resources.start()

    def close(self) -> None:
        """Stop what ``start`` began (the host is closed by the caller)."""
        for stop in reversed(self._stops):
            stop()
        self.resources.close()
        self.mailbox.close()

    def options(self) -> InitializationOptions:
        """What ``initialize`` answers: tools, and resources with their notifications."""
        return self.server.create_initialization_options(
            NotificationOptions(resources_changed=True)
        )

    def _seen(self, ctx: ServerRequestContext[Any, Any]) -> None:
        self.elicitor.seen(ctx.session)
        self.resources.seen(ctx.session)
        if not self._woken:  # a client to ask: the subagents a restart left waiting ask it
            self._woken = True
            subagents = self.host.services.find("subagents")
            if subagents is not None:
                subagents.resume_waiting(self.root)

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        self._seen(ctx)
        return types.ListToolsResult(tools=tools.listed(self.root))

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        self._seen(ctx)
        arguments: Any = params.arguments if params.arguments is not None else {}
        if params.name == mailbox.NAME:
            return await self._read_messages(arguments)
        if params.name != "subagent":
            return await tools.call_host_tool(self.root, self.host.services, params.name, arguments)
        session = ctx.session

        async def report(count: float, message: str) -> None:
            await session.report_progress(count, None, message)

        services = self.host.services
        progress = Progress(self.root, services.sessions, services.agents, report)
        try:
            return await tools.call_host_tool(self.root, self.host.services, params.name, arguments)
        finally:
            await progress.close()

    async def _read_messages(self, arguments: Any) -> types.CallToolResult:
        try:
            after, wait = mailbox.parse(arguments)
            read = await self.mailbox.read(after, wait)
        except mailbox.BadRead as bad:
            return tools.error(str(bad))
        return types.CallToolResult(
            content=[types.TextContent(text=mailbox.text_of(read))], structured_content=read
        )

    async def _list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        self._seen(ctx)
        return types.ListResourcesResult(resources=await self.resources.list())

    async def _read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        self._seen(ctx)
        text = await self.resources.read(str(params.uri))
        contents = types.TextResourceContents(uri=str(params.uri), mime_type=MIME, text=text)
        return types.ReadResourceResult(contents=[contents])

    async def _subscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        self._seen(ctx)
        await self.resources.subscribe(ctx.session, str(params.uri))
        return types.EmptyResult()

    async def _unsubscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        self.resources.unsubscribe(ctx.session, str(params.uri))
        return types.EmptyResult()

