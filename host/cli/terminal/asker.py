"""Approval requests and ``ask_user`` questions asked at the terminal client's prompt.

A request is printed inline, naming who asks (``ApprovalRequest.line``), and the prompt turns
into ``approve> `` (or ``answer> ``) until a typed line decides it; the replies mean what they
mean in plain mode (``host.cli.approve``). Requests are asked one at a time, oldest first;
the conversation gets the lines typed while none is open.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.text import Text

from host.cli.approve import CHOICES, END_OF_INPUT, interpret

if TYPE_CHECKING:
    from host.approvals.requests import Answer, ApprovalRequest

APPROVE_PROMPT = "approve> "
ANSWER_PROMPT = "answer> "


class PromptAsker:
    """The approvals handler of the terminal client; ``say`` prints a line above the prompt,
    ``changed`` redraws the prompt (its text depends on whether a request is open)."""

    def __init__(self, say: Callable[[Text], None], changed: Callable[[], None]) -> None:
        self._say = say
        self._changed = changed
        self._waiting: deque[tuple[ApprovalRequest, asyncio.Future[str | None]]] = deque()
        self._turn = asyncio.Lock()
        self._ended = False

    @property
    def prompt(self) -> str | None:
        """The prompt while a request is open (None when none is)."""
        if not self._waiting:
            return None
        request, _ = self._waiting[0]
        return ANSWER_PROMPT if request.question is not None else APPROVE_PROMPT

    def take(self, line: str) -> bool:
        """Give a typed line to the open request; False when none is open."""
        while self._waiting:
            _, reply = self._waiting[0]
            if not reply.done():
                reply.set_result(line)
                return True
            self._waiting.popleft()
        return False

    def end(self) -> None:
        """Input ended: every open request, and every later one, is denied (``END_OF_INPUT``)."""
        self._ended = True
        for _, reply in self._waiting:
            if not reply.done():
                reply.set_result(None)

    async def __call__(self, request: ApprovalRequest) -> Answer:
        """Ask ``request`` until a reply decides it (input ending denies it)."""
        from host.approvals.requests import Answer

        async with self._turn:
            try:
                answer = await self._ask(request)
            except asyncio.CancelledError:  # decided elsewhere, timed out, or the call ended
                self._say(Text(f"no longer waiting for an answer: {request.line()}", style="dim"))
                raise
        return answer if answer is not None else Answer.deny(END_OF_INPUT)

    async def _ask(self, request: ApprovalRequest) -> Answer | None:
        while True:
            question = request.question is not None
            self._say(Text(request.line() + ("" if question else CHOICES), style="bold cyan"))
            reply = await self._next_line(request)
            if reply is None:  # input ended (an empty line only asks again)
                return None
            answer = interpret(request, reply)
            if answer is not None:
                return answer

    async def _next_line(self, request: ApprovalRequest) -> str | None:
        """The next line typed for ``request``; None once input has ended."""
        if self._ended:  # nobody is left to type a reply
            return None
        reply: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        entry = (request, reply)
        self._waiting.append(entry)
        self._changed()
        try:
            return await reply
        finally:
            if entry in self._waiting:
                self._waiting.remove(entry)
            self._changed()
