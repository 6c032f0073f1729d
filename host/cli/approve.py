"""Asking the person at the terminal: approval requests and ``ask_user`` questions in ``run``,
``chat`` and ``dev``.

With stdin and stdout both terminals, a request is printed inline, naming who asks::

    sub_… (research, depth 2) wants to run shell {"cmd": "ls"} — [y]es / [a]lways / [n]o

and the next line typed answers it: ``y``/``yes`` approves this call, ``a``/``always`` approves
the tool for the rest of the root's session, ``n``/``no`` denies, optionally with a reason
(``n not now``; the model then sees ``the user denied shell: not now``, else ``… the user said
no``); anything else asks again. A question (``ask_user``) is printed as its ``line()`` and the
typed line is the answer; with choices, a number picks one (``2`` → the second choice).

The terminal's lines are read by one daemon thread (``Lines``): while a request is being
asked the next typed line goes to it, not to the conversation. Without a terminal (pipes,
scripts) nobody can answer: each request is denied with ``no terminal to ask`` and one line on
stderr, ``agent-host: approval denied (no terminal to ask): <request line>``
(``host.approvals.requests.no_terminal``, which ``app-server`` uses too).
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from host.approvals.requests import Answer, ApprovalRequest
    from host.disposal import Disposer

CHOICES = " — [y]es / [a]lways / [n]o"
SAID_NO = "the user said no"
END_OF_INPUT = "no answer (end of input)"


class Lines:
    """The lines of ``stream`` ("" once it ends), read by a daemon thread started on first use
    so that exit never waits on it. A line goes to the oldest ``answer()`` waiting (a request
    being asked), else to the conversation (``get``), which also receives lines typed ahead."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._buffer: deque[str] = deque()
        self._answers: deque[asyncio.Future[str]] = deque()
        self._reader: asyncio.Future[str] | None = None
        self._ended = False
        self._started = False

    @property
    def prompting(self) -> bool:
        """Whether the conversation is waiting for a line (its prompt is showing)."""
        return self._reader is not None and not self._reader.done()

    def is_terminal(self) -> bool:
        """Whether the stream is a terminal a person types into."""
        isatty = getattr(self.stream, "isatty", None)
        return bool(isatty and isatty())

    async def get(self) -> str:
        """The conversation's next line ("" at the end of input)."""
        if self._buffer:
            return self._buffer.popleft()
        if self._ended:
            return ""
        self._reader = self._wait()
        try:
            return await self._reader
        finally:
            self._reader = None

    async def answer(self) -> str:
        """The next line typed from now on ("" at the end of input), taken before the
        conversation sees it."""
        if self._ended:
            return ""
        future = self._wait()
        self._answers.append(future)
        try:
            return await future
        finally:
            if future in self._answers:
                self._answers.remove(future)

    def _wait(self) -> asyncio.Future[str]:
        loop = asyncio.get_running_loop()
        if not self._started:
            self._started = True
            threading.Thread(
                target=self._read, args=(loop,), name="agent-host-stdin", daemon=True
            ).start()
        return loop.create_future()

    def _read(self, loop: asyncio.AbstractEventLoop) -> None:
        while True:
            line = self.stream.readline()
            try:
                loop.call_soon_threadsafe(self._deliver, line)
            except RuntimeError:  # the loop closed (the command ended): nobody reads any more
                return
            if not line:
                return

    def _deliver(self, line: str) -> None:
        """Hand ``line`` to a waiting answer, else the conversation, else the buffer."""
        if not line:
            self._ended = True
            for waiting in [*self._answers, self._reader]:
                if waiting is not None and not waiting.done():
                    waiting.set_result("")
            return
        while self._answers:
            waiting = self._answers.popleft()
            if not waiting.done():
                waiting.set_result(line)
                return
        if self._reader is not None and not self._reader.done():
            self._reader.set_result(line)
        else:
            self._buffer.append(line)


def decision(reply: str) -> Answer | None:
    """The decision a typed reply means, None when it means none (module docstring)."""
    from host.approvals.requests import Answer

    word, _, rest = reply.strip().partition(" ")
    word = word.lower()
    if word in ("y", "yes") and not rest.strip():
        return Answer.approve()
    if word in ("a", "always") and not rest.strip():
        return Answer.approve_for_session()
    if word in ("n", "no"):
        return Answer.deny(rest.strip() or SAID_NO)
    return None


def chosen(reply: str, choices: tuple[str, ...] | None) -> str:
    """The answer a typed reply gives to a question: a choice's number picks that choice."""
    text = reply.strip()
    if choices and text.isdigit() and 1 <= int(text) <= len(choices):
        return choices[int(text) - 1]
    return text


def interpret(request: ApprovalRequest, reply: str) -> Answer | None:
    """What a typed reply decides for ``request``: an answer to a question (``chosen``), a
    decision on a tool call (``decision``), or None when it decides nothing (ask again)."""
    from host.approvals.requests import Answer

    if request.question is not None:
        text = chosen(reply, request.choices)
        return Answer.reply(text) if text else None
    return decision(reply)


class TerminalAsker:
    """The approvals handler of a conversation on a terminal: print, read, decide.

    ``before`` is called before a request is printed (to end a line the answer left open);
    when the conversation's prompt was showing, it is printed again after the answer.
    """

    def __init__(
        self, lines: Lines, out: TextIO, err: TextIO, before: Callable[[], None], prompt: str
    ) -> None:
        self.lines, self.out, self.err = lines, out, err
        self.before, self.prompt = before, prompt

    async def __call__(self, request: ApprovalRequest) -> Answer:
        """Ask ``request`` until a reply decides it (or input ends: denied)."""
        from host.approvals.requests import Answer

        self.before()
        prompting = self.lines.prompting
        if prompting:
            self._write("\n")
        try:
            answer = await self._ask(request)
        except asyncio.CancelledError:  # decided elsewhere, timed out, or the call ended
            self._write("\n")
            print(f"agent-host: no longer waiting for an answer: {request.line()}", file=self.err)
            raise
        if answer is None:
            answer = Answer.deny(END_OF_INPUT)
        if prompting and self.lines.prompting:
            self._write(self.prompt)
        return answer

    async def _ask(self, request: ApprovalRequest) -> Answer | None:
        while True:
            if request.question is not None:
                self._write(f"{request.line()} ")
            else:
                self._write(f"{request.line()}{CHOICES} ")
            reply = await self.lines.answer()
            if not reply:
                self._write("\n")
                return None
            answer = interpret(request, reply)
            if answer is not None:
                return answer

    def _write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()


def listen(
    service: Any,
    lines: Lines,
    out: TextIO,
    err: TextIO,
    *,
    before: Callable[[], None],
    prompt: str,
) -> Disposer:
    """Answer ``service``'s requests at the terminal when stdin and stdout are both one, else
    deny them (``no_terminal``); returns the disposer that stops listening."""
    isatty = getattr(out, "isatty", None)
    if lines.is_terminal() and isatty is not None and isatty():
        handler: Any = TerminalAsker(lines, out, err, before, prompt)
    else:
        from host.approvals.requests import no_terminal

        handler = no_terminal(err)
    disposer: Disposer = service.on_request(handler)
    return disposer
