"""Asking the person at the terminal: approval requests and ``ask_user`` questions in ``run``,
``chat`` and ``dev``.

With stdin and stdout both terminals, a request is printed inline, naming who asks::

    sub_… (research, depth 2) wants to run shell {"cmd": "ls"} — [y]es / [a]lways / [n]o

and the next line typed answers it: ``y``/``yes`` approves this call, ``a``/``always`` approves
the tool for the rest of the root's session, ``n``/``no`` denies, optionally with a reason
(``n not now``; the model then sees ``the user denied shell: not now``, else ``… the user said
no``); anything else asks again. A question (``ask_user``) is printed as its ``line()`` and the
typed line is the answer, unless it is a slash command (asked again); with choices, a number
picks one (``2`` → the second choice).

The terminal's lines are read by one daemon thread (``Lines``): while a request is being
asked every typed line goes to it, in order, not to the conversation — also a line that arrives
before the request is asked again (``maybe`` and ``y`` pasted at once: ``y`` answers). A reply
longer than ``MAX_REPLY`` characters decides nothing (``TOO_LONG``, asked again); a line that
is not valid UTF-8 is dropped with one line on stderr (``NOT_UTF8``). Without a terminal (pipes,
scripts) nobody can answer: each request is denied with ``no terminal to ask`` and one line on
stderr, ``agent-host: approval denied (no terminal to ask): <request line>``
(``host.approvals.requests.no_terminal``, which ``app-server`` uses too).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from host.approvals.requests import Answer, ApprovalRequest
    from host.disposal import Disposer

CHOICES = " — [y]es / [a]lways / [n]o"
SAID_NO = "the user said no"
END_OF_INPUT = "no answer (end of input)"
MAX_REPLY = 4096
TOO_LONG = "agent-host: a reply of {n} characters is too long (at most {limit}); asked again"
NOT_UTF8 = "agent-host: a line of input is not valid UTF-8; it was ignored"


def too_long(reply: str) -> str | None:
    """The line saying ``reply`` is too long to be a reply (``TOO_LONG``), None when it is not."""
    text = reply.rstrip("\n")
    return TOO_LONG.format(n=len(text), limit=MAX_REPLY) if len(text) > MAX_REPLY else None


class Lines:
    """The lines of ``stream`` ("" once it ends), read by a daemon thread started on first use
    so that exit never waits on it. A line goes to the oldest ``answer()`` waiting (a request
    being asked), else, while a request is being asked (``asking``), to its next ``answer()``,
    else to the conversation (``get``), which also receives lines typed ahead. A line that is
    not valid UTF-8 is dropped with ``NOT_UTF8`` on stderr."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._buffer: deque[str] = deque()
        self._replies: deque[str] = deque()
        self._asking = 0
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

    @property
    def typed_ahead(self) -> bool:
        """Whether a line typed while asking waits for the next ``answer()`` (it was echoed
        before the question was shown again)."""
        return bool(self._replies)

    @contextlib.contextmanager
    def asking(self) -> Iterator[None]:
        """For the block (a request being asked, perhaps several times): every line typed goes
        to the block's ``answer()`` calls in order, even one that arrives between two of them;
        the lines none took go to the conversation afterwards."""
        self._asking += 1
        try:
            yield
        finally:
            self._asking -= 1
            if not self._asking:
                left, self._replies = list(self._replies), deque()
                for line in left:
                    self._to_conversation(line)

    async def answer(self) -> str:
        """The next line typed from now on ("" at the end of input), taken before the
        conversation sees it (within ``asking``: the oldest not yet taken)."""
        if self._replies:
            return self._replies.popleft()
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
            line = self._readline()
            if line is None:
                print(NOT_UTF8, file=sys.stderr, flush=True)
                continue
            try:
                loop.call_soon_threadsafe(self._deliver, line)
            except RuntimeError:  # the loop closed (the command ended): nobody reads any more
                return
            if not line:
                return

    def _readline(self) -> str | None:
        """The stream's next line ("" at its end), None when it is not valid UTF-8 (read as
        bytes when the stream has them, so one bad line loses nothing else)."""
        binary = getattr(self.stream, "buffer", None)
        if binary is None:
            return self.stream.readline()
        raw: bytes = binary.readline()
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def _deliver(self, line: str) -> None:
        """Hand ``line`` to a waiting answer, else the request being asked, else the
        conversation."""
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
        if self._asking:
            self._replies.append(line)
        else:
            self._to_conversation(line)

    def _to_conversation(self, line: str) -> None:
        """Hand ``line`` to the conversation waiting for it, else keep it for its next get."""
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
    decision on a tool call (``decision``), or None when it decides nothing (ask again) — as
    a slash command (``/exit``, ``/send ID TEXT``) does at a question too."""
    from host.approvals.requests import Answer
    from host.cli.slash import names_a_command

    if request.question is not None:
        if names_a_command(reply):
            return None
        text = chosen(reply, request.choices)
        return Answer.reply(text) if text else None
    return decision(reply)


class TerminalAsker:
    """The approvals handler of a conversation on a terminal: print, read, decide.

    ``before`` is called before a request is printed (to end a line the answer left open);
    when the conversation's prompt was showing, it is printed again after the answer. ``look``
    runs a reply that is a command that only looks (``/show ID``) and says whether it was one:
    then the request is asked again.
    """

    def __init__(
        self,
        lines: Lines,
        out: TextIO,
        err: TextIO,
        before: Callable[[], None],
        prompt: str,
        look: Callable[[str], Awaitable[bool]] | None = None,
    ) -> None:
        self.lines, self.out, self.err = lines, out, err
        self.before, self.prompt, self.look = before, prompt, look
        self.stopped = False

    async def __call__(self, request: ApprovalRequest) -> Answer:
        """Ask ``request`` until a reply decides it (or input ends: denied)."""
        from host.approvals.requests import Answer

        self.before()
        prompting = self.lines.prompting
        if prompting:
            self._write("\n")
        try:
            with self.lines.asking():
                answer = await self._ask(request)
        except asyncio.CancelledError:  # decided elsewhere, timed out, or the call ended
            self._write("\n")
            if not self.stopped:  # else the host is closing: the request stays open
                line = f"agent-host: no longer waiting for an answer: {request.line()}"
                print(line, file=self.err)
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
            typed_ahead = self.lines.typed_ahead
            reply = await self.lines.answer()
            if typed_ahead:  # shown where it answers, not only where it was typed
                self._write(reply if reply.endswith("\n") else reply + "\n")
            if not reply:
                self._write("\n")
                return None
            refused = too_long(reply)
            if refused is not None:
                print(refused, file=self.err, flush=True)
                continue
            if self.look is not None and await self.look(reply):
                continue
            answer = interpret(request, reply)
            if answer is not None:
                return answer

    def _write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()


def listen(service: Any, asker: TerminalAsker) -> Disposer:
    """Answer ``service``'s requests with ``asker`` when its stdin and stdout are both
    terminals, else deny them (``no_terminal``, said on its ``err``); returns the disposer
    that stops listening (a request still being asked then stays open, said nothing of)."""
    isatty = getattr(asker.out, "isatty", None)
    if not (asker.lines.is_terminal() and isatty is not None and isatty()):
        from host.approvals.requests import no_terminal

        disposer: Disposer = service.on_request(no_terminal(asker.err))
        return disposer
    stop_asking: Disposer = service.on_request(asker)

    def stop() -> None:
        asker.stopped = True
        stop_asking()

    return stop
