"""Approval requests and ``ask_user`` questions asked at the terminal client's prompt.

A request is printed inline, naming who asks (``ApprovalRequest.line``), and the prompt turns
into ``approve> `` (or ``answer> ``) until a typed line decides it; the replies mean what they
mean in plain mode (``host.cli.approve``). Requests are asked one at a time, oldest first;
the conversation gets the lines typed while none is open. Ctrl-D at the question denies it
(``END_OF_INPUT``, ``end_of_input``); once the conversation ends (``stop``) nothing more is
asked, and the requests still open stay open: the host records nothing for them, and they are
asked again when the conversation resumes.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.text import Text

from host.cli.approve import CHOICES, END_OF_INPUT, interpret, too_long

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

    def stop(self) -> None:
        """The conversation ends: nothing more is asked or said; open requests stay open."""
        self._ended = True

    async def end_of_input(self) -> None:
        """Ctrl-D at the question: the open request is denied (``END_OF_INPUT``), and this
        returns once that answer is the host's (which records it before it closes); then
        ``stop``."""
        self.stop()
        if not self._waiting:
            return
        _, reply = self._waiting[0]
        if reply.done():
            return
        reply.set_result(None)
        answered = asyncio.get_running_loop().create_future()
        # Callbacks run in the order they were added: the asking task's step, which returns
        # the answer to the host, comes first.
        reply.add_done_callback(lambda _: answered.set_result(None))
        await answered

    async def __call__(self, request: ApprovalRequest) -> Answer:
        """Ask ``request`` until a reply decides it (input ending denies it)."""
        from host.approvals.requests import Answer

        async with self._turn:
            try:
                answer = await self._ask(request)
            except asyncio.CancelledError:  # decided elsewhere, timed out, or the call ended
                if not self._ended:
                    line = f"no longer waiting for an answer: {request.line()}"
                    self._say(Text(line, style="dim"))
                raise
        return answer if answer is not None else Answer.deny(END_OF_INPUT)

    async def _ask(self, request: ApprovalRequest) -> Answer | None:
        if self._ended:  # the conversation ended: left open until the host closes
            await asyncio.get_running_loop().create_future()
        while True:
            question = request.question is not None
            self._say(Text(request.line() + ("" if question else CHOICES), style="bold cyan"))
            reply = await self._next_line(request)
            if reply is None:  # Ctrl-D (an empty line only asks again)
                return None
            refused = too_long(reply)
            if refused is not None:
                self._say(Text(refused.removeprefix("agent-host: "), style="red"))
                continue
            answer = interpret(request, reply)
            if answer is not None:
                return answer

    async def _next_line(self, request: ApprovalRequest) -> str | None:
        """The next line typed for ``request``; None at Ctrl-D."""
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
