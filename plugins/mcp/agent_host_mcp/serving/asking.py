"""Requests to the user from anywhere below the root, put to the MCP client by elicitation.

The approvals service routes every request of the root's tree to this handler (docs/approvals.md);
it asks the newest connected client that declared the ``elicitation`` capability with
``elicitation/create``: the message is the request's one line (who asks — id, label, depth —
and the tool with its arguments, or the question), the form a ``decision`` (``approve`` |
``approve_for_session`` | ``deny``) and an optional ``reason``, or for a question an
``answer`` (an enum of its choices when it has them). ``decline`` and ``cancel`` deny. With
no such client the request gets the no-terminal denial. A client that answers with an MCP
error denies (the error's first line is the reason) and stays asked; one whose connection
fails (it left) leaves the request open for the next capable client; one still open when the server
stops ends with its turn, recorded ``cancelled``, as at any close (the durable route).
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.shared.exceptions import MCPError, NoBackChannelError

from host.api import Answer, ApprovalRequest, no_terminal

if TYPE_CHECKING:
    from mcp.server.session import ServerSession

DECISIONS = ("approve", "approve_for_session", "deny")
APPROVAL_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "decision": {"type": "string", "enum": list(DECISIONS), "title": "Decision"},
        "reason": {"type": "string", "title": "Reason (told to the agent when you deny)"},
    },
    "required": ["decision"],
}
REFUSED = {"decline": "the user declined", "cancel": "the user cancelled"}
"""The reason a ``decline`` or ``cancel`` action denies with."""
ERRED = "the client answered with an error"
"""The reason an MCP error answer denies with, before the error's message."""
ELICITING = types.ClientCapabilities(elicitation=types.ElicitationCapability())


def question_form(choices: tuple[str, ...] | None) -> dict[str, Any]:
    """The form of a question: a free ``answer``, or one of its ``choices``."""
    answer: dict[str, Any] = {"type": "string", "title": "Answer"}
    if choices:
        answer["enum"] = list(choices)
    return {"type": "object", "properties": {"answer": answer}, "required": ["answer"]}


def client_key(session: ServerSession) -> int:
    """One key per client connection (the SDK makes a session object per request)."""
    return id(getattr(session, "_connection", session))


class Elicitor:
    """The approvals handler of ``mcp serve`` (module docstring)."""

    def __init__(self) -> None:
        self._clients: dict[int, ServerSession] = {}
        self._joined = asyncio.Event()

    def seen(self, session: ServerSession) -> None:
        """A request came from ``session``'s client: remember it when it can be asked."""
        if session.check_client_capability(ELICITING):
            key = client_key(session)
            self._clients.pop(key, None)
            self._clients[key] = session  # newest last
            self._joined.set()

    async def __call__(self, request: ApprovalRequest) -> Answer:
        """Ask the newest capable client; the no-terminal denial when there is none."""
        if not self._clients:
            return await no_terminal(sys.stderr)(request)
        while True:
            for key, session in reversed(list(self._clients.items())):
                try:
                    result = await _elicit(session, request)
                except Exception as error:
                    if isinstance(error, MCPError) and _answered(error):
                        return Answer.deny(f"{ERRED}: {_first_line(error.message)}")
                    self._clients.pop(key, None)  # it left: ask another, or wait for one
                    continue
                return _answer(request, result)
            self._joined.clear()
            await self._joined.wait()


def _answered(error: MCPError) -> bool:
    """Whether ``error`` is the client's own answer, not a lost connection."""
    return error.code != types.CONNECTION_CLOSED and not isinstance(error, NoBackChannelError)


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or ["no message"])[0]


async def _elicit(session: ServerSession, request: ApprovalRequest) -> types.ElicitResult:
    form = question_form(request.choices) if request.question is not None else APPROVAL_FORM
    return await session.elicit_form(request.line(), form)


def _answer(request: ApprovalRequest, result: types.ElicitResult) -> Answer:
    """The decision an elicitation result means; anything unreadable denies."""
    content = result.content or {}
    if result.action != "accept":
        return Answer.deny(REFUSED[result.action])
    if request.question is not None:
        answer = content.get("answer")
        if not isinstance(answer, str) or (request.choices and answer not in request.choices):
            return Answer.deny("the client's answer could not be read")
        return Answer.reply(answer)
    decision, reason = content.get("decision"), content.get("reason")
    if decision == "approve":
        return Answer.approve()
    if decision == "approve_for_session":
        return Answer.approve_for_session()
    if decision == "deny":
        return Answer.deny(reason if isinstance(reason, str) and reason else "no reason given")
    return Answer.deny("the client's answer could not be read")
