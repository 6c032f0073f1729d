"""The ``approvals`` service: every request that needs the user goes to the root of the caller's
tree, whatever its depth, with the innermost requester kept as its ``origin``.

A tool call the policy (``host.approvals.policy``) sends to the user becomes an
``ApprovalRequested`` event in the calling agent's log, mirrored into the root's, committed
durably; the call then waits. Requests are asked one at a time, in arrival order, through the
front end's handler (``on_request``) — one at a time for the whole host (a terminal user), or,
for a handler that can hold several questions open (``per_root``), one at a time per root
tree, the trees in parallel; without a handler they wait in ``pending()`` for ``decide``.
The decision is an ``ApprovalDecided`` event in both logs, committed durably **before** the
tool runs; a denial is the error result ``the user denied <tool>: <reason>``; "approve for
this session" lets that tool run without asking for the rest of the root's session, and decides
the requests for it already queued in that tree at once. A policy ``timeout`` denies a request
left waiting, counted from when it is shown (handed to the handler). A call interrupted
while it waits (an interrupt, a settlement) records its request as ``cancelled``; the host
closing (``aclose``) records nothing for it, so it is asked again when its agent resumes, as
after a kill. ``ask_user`` questions take the same route and return the answer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from host.approvals.policy import Policy
from host.approvals.records import LogRequests, origin_of
from host.approvals.requests import (
    POLICY_DENIES,
    Answer,
    ApprovalError,
    ApprovalRequest,
    Handler,
    denied_text,
)
from host.disposal import Disposer
from host.sessions.model import (
    ApprovalDecided,
    ApprovalRequested,
    Decision,
    EventBody,
    new_id,
)
from host.tools.tool import Tool, ToolExec, ToolResult

if TYPE_CHECKING:
    from host.agents.agent import Agent

log = logging.getLogger(__name__)


@attrs.define(eq=False)
class _Pending:
    request: ApprovalRequest
    agent: Agent
    root: Agent
    future: asyncio.Future[Answer]
    shown: asyncio.Event = attrs.field(factory=asyncio.Event)


class ApprovalService:
    """Routes, records and answers approval requests (module docstring)."""

    def __init__(
        self,
        policy: Policy,
        live_agent: Callable[[str], Agent | None],
        plugin_of: Callable[[str, Tool | None], str | None] = lambda name, tool: None,
    ) -> None:
        """``plugin_of(name, tool)``: the plugin that registered the tool ``tool`` (None: the
        global one of that ``name``), which the policy's globs also match."""
        self.policy = policy
        self._live_agent = live_agent
        self._plugin_of = plugin_of
        self._handler: Handler | None = None
        self._per_root = False
        self._queue: list[_Pending] = []
        self._asking: dict[str | None, tuple[_Pending, asyncio.Task[None]]] = {}
        self._closed: dict[str, Decision] = {}
        self._broken: set[str] = set()
        self._root_logs: dict[str, tuple[Agent, LogRequests]] = {}
        self._closing = False

    # -- the front end -----------------------------------------------------------------------

    def on_request(self, handler: Handler, *, per_root: bool = False) -> Disposer:
        """Ask ``handler`` each request, one at a time (``per_root``: one at a time per root
        tree, several trees' requests open at once); returns the disposer that stops it."""
        self._handler = handler
        self._per_root = per_root
        self._pump()

        def dispose() -> None:
            if self._handler is handler:
                self._handler = None

        return dispose

    async def aclose(self) -> None:
        """Host shutdown (before the agents stop): an answer already given is recorded; every
        other request stays open — nothing is recorded for it, it is asked again when its
        agent resumes — and nobody is asked any more."""
        self._closing = True
        self._handler = None
        for pending in list(self._queue):
            if pending.future.done() and not pending.future.cancelled():
                self._close(pending, pending.future.result())
        asking, self._asking = list(self._asking.values()), {}
        for _, task in asking:
            task.cancel()
        await asyncio.gather(*(task for _, task in asking), return_exceptions=True)

    def pending(self) -> list[ApprovalRequest]:
        """The requests waiting for a decision, oldest first (not one answered a moment ago
        whose decision is being recorded)."""
        return [pending.request for pending in self._queue if not pending.future.done()]

    def decide(self, request_id: str, answer: Answer) -> None:
        """Decide a pending request; ``ApprovalError`` for an unknown or closed one."""
        for pending in self._queue:
            if pending.request.request_id == request_id:
                if not pending.future.done():
                    pending.future.set_result(answer)
                return
        closed = self._closed.get(request_id)
        if closed is not None:
            raise ApprovalError(
                "REQUEST_CLOSED", f'approval request "{request_id}" is already {closed}'
            )
        raise ApprovalError("UNKNOWN_REQUEST", f'no pending approval request "{request_id}"')

    # -- the calls ---------------------------------------------------------------------------

    async def check(
        self, tool: Tool, arguments: Any, raw: Any, exec: ToolExec
    ) -> ToolResult | None:
        """None when the call may run; else the denial the model sees. Waits for the user when
        the policy says ask."""
        policy = self.policy
        if tool.needs_approval is False and not policy.deny and not policy.ask:
            return None  # the common case, decided without matching: no list can catch it
        plugin = self._plugin_of(tool.name, tool)
        verdict = policy.verdict(tool.name, self._needs_approval(tool, arguments), plugin)
        if verdict == "run":
            return None
        if verdict == "deny":
            return ToolResult.error(denied_text(tool.name, POLICY_DENIES))
        agent = exec.agent
        if agent is None:
            return ToolResult.error(denied_text(tool.name, "a call without an agent cannot ask"))
        root = self._root(agent)
        if tool.name in self._root_log(root).approved_tools:
            return None
        answer = await self._ask(agent, root, tool.name, raw, exec.tool_call_id)
        if answer.decision in ("approved", "approved_for_session"):
            return None
        return ToolResult.error(denied_text(tool.name, answer.reason or "no reason given"))

    async def ask_user(
        self, exec: ToolExec, question: str, choices: tuple[str, ...] | None = None
    ) -> Answer:
        """Put ``question`` to the root's user the way a tool call is asked; the answer."""
        agent = exec.agent
        if agent is None:
            raise ApprovalError("NO_AGENT", "a question needs a calling agent")
        arguments = {"question": question, "choices": list(choices) if choices else None}
        return await self._ask(
            agent, self._root(agent), "ask_user", arguments, exec.tool_call_id, question, choices
        )

    def _needs_approval(self, tool: Tool, arguments: Any) -> bool:
        rule = tool.needs_approval
        if not callable(rule):
            return rule
        try:
            return bool(rule(arguments))
        except Exception:
            if tool.name not in self._broken:
                self._broken.add(tool.name)
                log.exception("needs_approval of %s raised: every call of it is asked", tool.name)
            return True

    # -- asking ------------------------------------------------------------------------------

    async def _ask(
        self,
        agent: Agent,
        root: Agent,
        tool: str,
        arguments: Any,
        tool_call_id: str,
        question: str | None = None,
        choices: tuple[str, ...] | None = None,
    ) -> Answer:
        origin = origin_of(agent)
        request = ApprovalRequest(
            new_id("apr_"), tool, arguments, tool_call_id, origin, root.id, question, choices
        )
        self._record(agent, root, request.event())
        return await self._queue_and_wait(request, agent, root)

    async def ask_again(self, agent: Agent, requested: ApprovalRequested) -> Answer:
        """Ask a request a restart left without a decision again (``host.approvals.resume``):
        the same request id and origin, routed to the current root (mirrored into its log if
        it lacks the request); the decision is recorded in both logs as usual. A tool call the
        policy now denies is denied without asking (recorded with the policy's reason)."""
        root = self._root(agent)
        if root is not agent and requested.request_id not in self._root_log(root).requested:
            self._mirror(root, [requested])
        request = ApprovalRequest.from_event(requested, root.id)
        plugin = self._plugin_of(requested.tool, None)
        denied = self.policy.verdict(requested.tool, True, plugin) == "deny"
        if requested.question is None and denied:
            answer = Answer.deny(POLICY_DENIES)  # the policy changed meanwhile: nobody is asked
            pending = _Pending(request, agent, root, asyncio.get_running_loop().create_future())
            self._close(pending, answer)
            return answer
        return await self._queue_and_wait(request, agent, root)

    def mirror_decisions(self, agent: Agent, decisions: list[ApprovalDecided]) -> None:
        """Copy into the root's log the decisions ``agent``'s log has and the root's mirror
        lacks (a crash between the two appends), so the root's log shows nobody waiting."""
        root = self._root(agent)
        if root is agent:
            return
        undecided = self._root_log(root).undecided
        missing = [decided for decided in decisions if decided.request_id in undecided]
        if missing:
            self._mirror(root, missing)

    def stored_requesters(self, agent: Agent) -> list[str]:
        """The agents of ``agent``'s tree, other than its root and not live, with a request a
        restart left open in the root's log, oldest request first (resumed with the root,
        cancelled by an ancestor's interrupt: ``host.subagents.waking``)."""
        root = self._root(agent)
        ids: list[str] = []
        for requested in self._root_log(root).undecided.values():
            agent_id = requested.origin.agent_id
            if agent_id != root.id and agent_id not in ids and self._live_agent(agent_id) is None:
                ids.append(agent_id)
        return ids

    async def cancel_stored(self, agent_id: str, caller: Agent, store: Any) -> None:
        """``interrupt_agent`` from ``caller``, an ancestor, on ``agent_id`` of its tree that
        is not live, only stored, with requests to the user a restart left open in the root's
        log: each is recorded ``cancelled`` in the agent's stored log (taken from ``store``,
        the sessions store, whose load ends its open turn ``interrupted``), durably, then in
        the root's, so it is not asked again and its call is ``interrupted`` when the agent
        resumes. Returns once recorded; a log that cannot be taken (live again, held by
        another process) raises its ``HostError`` and nothing is recorded."""
        root = self._root(caller)
        undecided = self._root_log(root).undecided.values()
        mine = [r for r in undecided if r.origin.agent_id == agent_id and agent_id != root.id]
        if not mine:
            return
        reason = "the call was interrupted"
        decided = [ApprovalDecided(r.request_id, "cancelled", reason) for r in mine]
        session = await store.resume(agent_id)
        try:
            session.append_all(decided)
            session.commit(durable=True)
        finally:
            store.release(agent_id)
        self._mirror(root, decided)

    def waiting(self, agent: Agent) -> set[str]:
        """The agents of ``agent``'s tree with a request waiting for a decision: asked now, or
        left pending in the root's log by a child not resumed since (``list_agents``)."""
        root = self._root(agent)
        ids = {pending.agent.id for pending in self._queue if pending.root is root}
        ids.update(r.origin.agent_id for r in self._root_log(root).undecided.values())
        return ids

    def _root_log(self, root: Agent) -> LogRequests:
        """The requests of ``root``'s log, folded up to its current end."""
        known = self._root_logs.get(root.id)
        if known is None or known[0] is not root:
            known = self._root_logs[root.id] = (root, LogRequests())
        return known[1].update(root.session.events)

    async def _queue_and_wait(self, request: ApprovalRequest, agent: Agent, root: Agent) -> Answer:
        """Queue ``request``, wait for its answer and record it (cancelled if interrupted)."""
        pending = _Pending(request, agent, root, asyncio.get_running_loop().create_future())
        self._queue.append(pending)
        if self._handler is None:  # listed by pending() from now on
            pending.shown.set()
        self._pump()
        try:
            answer = await self._wait(pending)
        except asyncio.CancelledError:
            if self._closing:  # left open: asked again when the agent resumes
                if pending in self._queue:
                    self._queue.remove(pending)
                raise
            try:
                self._close(pending, Answer("cancelled", reason="the call was interrupted"))
            except Exception:  # the interrupt wins; the log keeps the request open
                log.exception("could not record the cancelled request %s", request.request_id)
            raise
        self._close(pending, answer)
        return answer

    async def _wait(self, pending: _Pending) -> Answer:
        """The answer; the policy's timeout, counted from when the request is shown (handed to
        the front end, or queued when there is none), denies it."""
        timeout = self.policy.timeout
        if timeout is not None and not pending.shown.is_set():
            shown = asyncio.ensure_future(pending.shown.wait())
            either: set[asyncio.Future[Any]] = {shown, pending.future}
            try:
                await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
            finally:
                shown.cancel()
        try:
            return await asyncio.wait_for(asyncio.shield(pending.future), timeout)
        except TimeoutError:
            return Answer.deny(f"no answer within {timeout:g} seconds")

    def _pump(self) -> None:
        """Ask the oldest request of each line (the host, or each root tree with ``per_root``)
        where none is being asked, if a handler is set."""
        if self._handler is None:
            return
        asked = {pending for pending, _ in self._asking.values()}
        for pending in self._queue:
            line = self._line(pending)
            if line not in self._asking and pending not in asked and not pending.future.done():
                pending.shown.set()
                asking = self._ask_head(self._handler, pending)
                self._asking[line] = (pending, asyncio.get_running_loop().create_task(asking))

    def _line(self, pending: _Pending) -> str | None:
        """The line ``pending`` waits in: its root's with ``per_root``, else the host's."""
        return pending.request.root_id if self._per_root else None

    async def _ask_head(self, handler: Handler, pending: _Pending) -> None:
        try:
            answer = await handler(pending.request)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            log.exception("the approval handler failed")
            answer = Answer.deny(f"the question could not be asked ({type(error).__name__})")
        if not pending.future.done():
            pending.future.set_result(answer)

    def _close(self, pending: _Pending, answer: Answer) -> None:
        """Record how ``pending`` ended (durably, both logs) and ask the next request; a
        request already recorded (at ``aclose``) is not recorded twice."""
        request_id = pending.request.request_id
        if request_id in self._closed:
            return
        if pending in self._queue:
            self._queue.remove(pending)
        self._closed[request_id] = answer.decision
        for line, (asked, task) in list(self._asking.items()):
            if asked is pending:
                del self._asking[line]
                if not task.done():
                    task.cancel()
        decided = ApprovalDecided(request_id, answer.decision, answer.reason, answer.answer)
        try:
            self._record(pending.agent, pending.root, decided)
            if answer.decision == "approved_for_session":
                self._approve_queued(pending)
        finally:  # a log that refuses this decision must not stall the requests behind it
            self._pump()

    def _approve_queued(self, approved: _Pending) -> None:
        """"Always" for a tool also decides the requests for it already waiting in the same
        root's queue (siblings'): each approved for the session, recorded as its call wakes."""
        for pending in self._queue:
            same_tree = pending.root is approved.root and not pending.future.done()
            if same_tree and (pending.request.question, pending.request.tool) == (
                None,
                approved.request.tool,
            ):
                pending.future.set_result(Answer.approve_for_session())

    # -- logs and the tree -------------------------------------------------------------------

    def _record(self, agent: Agent, root: Agent, body: EventBody) -> None:
        """Append ``body`` to ``agent``'s log (durably: a failure raises, and then nothing
        runs) and mirror it into the root's (a root that refuses it is logged, not fatal)."""
        agent.session.append(body)
        agent.session.commit(durable=True)
        if root is not agent:
            self._mirror(root, [body])

    def _mirror(self, root: Agent, bodies: Sequence[EventBody]) -> None:
        """Append ``bodies`` to the root's log, durably; a root that refuses is logged."""
        try:
            root.session.append_all(bodies)
            root.session.commit(durable=True)
        except Exception:
            log.exception("could not mirror %s into the root's log %s", bodies[0].kind, root.id)

    def _root(self, agent: Agent) -> Agent:
        """The root of ``agent``'s tree among the live agents (the topmost live ancestor)."""
        current = agent
        seen = {agent.id}
        while (parent_id := current.session.header.parent_session) is not None:
            parent = self._live_agent(parent_id)
            if parent is None or parent.id in seen:
                break
            seen.add(parent.id)
            current = parent
        return current
