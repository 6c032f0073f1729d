"""Approval requests and ``ask_user`` questions as the server's requests to clients.

The approvals service asks through ``Asker`` (its front-end handler) one request at a time per
root tree: requests of different threads are open at once, so a client that leaves one
unanswered holds up that thread only. The request goes, as ``approval/request`` or
``userInput/request``, to every connection that declared it can answer
(``capabilities.approvals`` / ``userInput``) and follows the request's thread; the first
answer decides, and every follower hears the decision as ``approval/decided`` from the log.
A client that disconnects or errs leaves the request open for the others and for a capable
client that follows the thread later (the policy's ``timeout`` still applies). With nobody
able to answer when it is asked, the request gets the no-terminal denial of
``agent-host run``.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Any

import cattrs

from host.approvals.requests import Answer, ApprovalRequest, no_terminal
from host.appserver.protocol import (
    ApprovalRequestParams,
    ApprovalResponse,
    UserInputRequestParams,
    UserInputResponse,
)
from host.clients.events import Origin
from host.serialization import structure

if TYPE_CHECKING:
    from host.appserver.connection import Connection

DECISIONS = {
    "approve": Answer.approve,
    "approveForSession": Answer.approve_for_session,
}
UNREADABLE = "the client's answer could not be read"


class Asker:
    """The approvals handler of an app-server (module docstring)."""

    def __init__(self, connections: set[Connection]) -> None:
        self._connections = connections
        self._open: dict[str, _Open] = {}

    async def __call__(self, request: ApprovalRequest) -> Answer:
        """Ask ``request`` of every capable follower; the first answer."""
        capable = [c for c in self._connections if self._can_answer(c, request)]
        if not capable:
            return await no_terminal(sys.stderr)(request)
        opened = self._open[request.request_id] = _Open(request)
        try:
            for connection in capable:
                self._ask(connection, opened)
            return await opened.future
        finally:  # also when the service gives up (a timeout, an interrupt): stop asking
            self._open.pop(request.request_id, None)
            opened.future.cancel()

    def following(self, connection: Connection, thread_id: str) -> None:
        """``connection`` now follows ``thread_id``: ask it the thread's open requests (those
        it was not asked yet)."""
        for opened in list(self._open.values()):
            request = opened.request
            if request.root_id == thread_id and self._can_answer(connection, request):
                self._ask(connection, opened)

    def _can_answer(self, connection: Connection, request: ApprovalRequest) -> bool:
        if connection.state != "ready" or request.root_id not in connection.follows:
            return False
        capabilities = connection.capabilities
        return capabilities.user_input if request.question is not None else capabilities.approvals

    def _ask(self, connection: Connection, opened: _Open) -> None:
        if connection in opened.asked:
            return
        opened.asked.add(connection)
        request, future = opened.request, opened.future

        async def ask() -> None:
            method, params = _request_of(request)
            try:
                reply = await connection.ask(method, params)
            except Exception:
                return  # gone or erring: the request stays open for the others
            if not future.done():
                future.set_result(_answer(request, reply))

        task = asyncio.get_running_loop().create_task(ask())
        future.add_done_callback(lambda _f: task.cancel())


class _Open:
    """A request being asked: the decision to come and the connections asked."""

    def __init__(self, request: ApprovalRequest) -> None:
        self.request = request
        self.future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self.asked: set[Connection] = set()


def _request_of(request: ApprovalRequest) -> tuple[str, Any]:
    origin = Origin.of(request.origin)
    if request.question is not None:
        choices = list(request.choices) if request.choices else None
        params: Any = UserInputRequestParams(
            request.root_id, request.request_id, origin, request.question, choices
        )
        return "userInput/request", params
    params = ApprovalRequestParams(
        request.root_id, request.request_id, origin, request.tool, request.arguments
    )
    return "approval/request", params


def _answer(request: ApprovalRequest, reply: Any) -> Answer:
    """The decision a client's result means; an unreadable one denies."""
    try:
        if request.question is not None:
            said = structure(reply, UserInputResponse)
            if said.decline or said.answer is None:
                return Answer.deny(said.reason or "the user declined to answer")
            return Answer.reply(said.answer)
        decided = structure(reply, ApprovalResponse)
    except (cattrs.BaseValidationError, TypeError, ValueError):
        return Answer.deny(UNREADABLE)
    if decided.decision == "deny":
        return Answer.deny(decided.reason or "no reason given")
    return DECISIONS[decided.decision]()
