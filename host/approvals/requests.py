"""What a front end sees of the approvals service: a request, who asks, and the answers.

``ApprovalRequest`` is one request as asked (its ``line()`` says who wants what), ``Answer``
a decision on it, and the texts the model sees for a denial or an unanswered question.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, TextIO

import attrs

from host.errors import HostError
from host.sessions.model import ApprovalOrigin, ApprovalRequested, Decision
from host.tools.tool import ToolResult


def denied_text(tool: str, reason: str) -> str:
    """What the model sees for a denied call."""
    return f"the user denied {tool}: {reason}"


POLICY_DENIES = "the approval policy does not allow it"


def question_result(answer: Answer) -> ToolResult:
    """What the model sees for an ``ask_user`` question: the answer, or why there is none."""
    if answer.decision == "answered":
        return ToolResult(answer.answer or "", structured={"answer": answer.answer})
    return ToolResult.error(f"the user did not answer: {answer.reason or 'no reason given'}")


class ApprovalError(HostError):
    """A decision that cannot be taken: an unknown request, or one already closed."""


@attrs.frozen
class ApprovalRequest:
    """A request as a front end sees it: the tool and its raw arguments (or a question), the
    call, the innermost requesting agent (``origin``) and the root it was routed to."""

    request_id: str
    tool: str
    arguments: Any
    tool_call_id: str
    origin: ApprovalOrigin
    root_id: str
    question: str | None = None
    choices: tuple[str, ...] | None = None

    @classmethod
    def from_event(cls, requested: ApprovalRequested, root_id: str) -> ApprovalRequest:
        """The request a log's ``ApprovalRequested`` records, routed to ``root_id``."""
        choices = tuple(requested.choices) if requested.choices else None
        return cls(
            requested.request_id,
            requested.tool,
            requested.arguments,
            requested.tool_call_id,
            requested.origin,
            root_id,
            requested.question,
            choices,
        )

    def event(self) -> ApprovalRequested:
        """The ``ApprovalRequested`` that records this request in a log."""
        choices = list(self.choices) if self.choices else None
        return ApprovalRequested(
            self.request_id,
            self.tool,
            self.arguments,
            self.tool_call_id,
            self.origin,
            self.question,
            choices,
        )

    def who(self) -> str:
        """``<id> (<label>, depth N)``: who asks."""
        label = f"{self.origin.label}, " if self.origin.label else ""
        return f"{self.origin.agent_id} ({label}depth {self.origin.depth})"

    def line(self) -> str:
        """One line saying who wants what."""
        if self.question is not None:
            numbered = " / ".join(f"{n} {c}" for n, c in enumerate(self.choices or (), 1))
            choices = f" [{numbered}]" if self.choices else ""
            return f"{self.who()} asks: {self.question}{choices}"
        arguments = json.dumps(self.arguments, ensure_ascii=False, separators=(", ", ": "))
        return f"{self.who()} wants to run {self.tool} {arguments}"


@attrs.frozen
class Answer:
    """A decision on a request: ``approve()``, ``approve_for_session()``, ``deny(reason)``, or
    ``answer(text)`` for a question."""

    decision: Decision
    reason: str | None = None
    answer: str | None = None

    @classmethod
    def approve(cls) -> Answer:
        """Run this call."""
        return cls("approved")

    @classmethod
    def approve_for_session(cls) -> Answer:
        """Run this call and this tool's later calls in the root's session without asking."""
        return cls("approved_for_session")

    @classmethod
    def deny(cls, reason: str = "no reason given") -> Answer:
        """Do not run it; the model sees ``reason``."""
        return cls("denied", reason=reason)

    @classmethod
    def reply(cls, text: str) -> Answer:
        """The answer to a question."""
        return cls("answered", answer=text)


Handler = Callable[[ApprovalRequest], Awaitable[Answer]]

NO_TERMINAL = "no terminal to ask"
"""Why a request nobody can answer is denied (pipes, scripts, an app-server without a
capable client)."""


def no_terminal(err: TextIO) -> Handler:
    """The handler when nobody can answer: deny each request, saying so in one line on
    ``err``."""

    async def deny(request: ApprovalRequest) -> Answer:
        print(f"agent-host: approval denied ({NO_TERMINAL}): {request.line()}", file=err)
        err.flush()
        return Answer.deny(NO_TERMINAL)

    return deny
