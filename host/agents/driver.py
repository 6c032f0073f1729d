"""The driver: runs an agent's turns, one at a time, in one asyncio task.

A turn is ``TurnStart``, then steps, then ``TurnEnd`` and a durable commit. A step claims what
the inbox holds for it (the turn's followup at the first step, the steer batch, injects), calls
the model with the system prompt, the session's model messages and the visible tool schemas,
appends the assistant message and runs the tool calls it asked for. The turn ends when the model
answers without tool calls and no steer is waiting (``completed``), after ``max_steps`` model
calls (``max_steps``), when an answer is cut at the model's token limit (stop reason
``max_tokens``: its tool calls, perhaps cut mid-arguments, are never run and get an error
result saying so), when the model raises (``error``) or on an interrupt (``interrupted``).

Interrupting sets the turn's cancel signal and cancels the task, so a model call or tool in
flight is cancelled; tool calls left without a result get an error result saying so.

A resumed agent whose log ends in tool calls still waiting for their results (a request for
approval asked again after a restart, ``host.approvals.resume``) runs a turn that first gives
each of them its result, in call order, then goes on like any turn at its next step.

A model that streams (``host.agents.models.streams``) is consumed delta by delta: stream
listeners see every delta and then the step's complete response; the session gets only the
final assistant message. A stream interrupted part-way leaves its text so far as the step's
assistant message (no partial tool calls), and the turn ends ``interrupted``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import attrs

from host.agents.models import (
    ModelRequest,
    ModelResponse,
    StreamEvent,
    TextDelta,
    ToolSpec,
    streams,
)
from host.agents.tool_results import (
    CUT_TOOL_TEXT,
    INTERRUPTED_TOOL_TEXT,
    left_to_resume,
    sized,
    tool_message,
    unanswered,
)
from host.cancel import CancelSignal
from host.disposal import Disposer
from host.errors import HostError, log_failure
from host.sessions.model import (
    MessageEvent,
    StopReason,
    ToolCall,
    TurnEnd,
    TurnStart,
    new_id,
)
from host.sessions.persistence import open_turn
from host.settings import DEFAULT_MAX_RESULT_CHARS, HostSettings
from host.tools.execute import run_tool
from host.tools.tool import Tool, ToolExec, ToolResult

if TYPE_CHECKING:
    from host.agents.agent import Agent

log = logging.getLogger(__name__)


@attrs.frozen
class TurnOutcome:
    """How a turn ended: its stop reason, the agent's last answer, the error text if any."""

    agent_id: str
    turn_id: str
    stop_reason: StopReason
    last_answer: str | None
    error: str | None = None


TurnEndListener = Callable[[TurnOutcome], None]
Finisher = Callable[[ToolExec], Awaitable[ToolResult]]
"""Gives a tool call left without a result (at resume) its result."""
Run = Callable[[], Awaitable[ToolResult]]
"""Runs one tool call of a step to its (sized) result."""
StreamListener = Callable[[StreamEvent], None]
"""Sees each delta of a streaming model call, then the call's ``ModelResponse`` (non-streaming
models: the response alone), and the ``ToolProgress`` its tool calls report."""


class _ModelFailed(Exception):
    """The model call raised; the turn ends with ``error``."""


class Driver:
    """Runs one agent's turns; owns the turn task, the turn's signal and turn-end listeners."""

    def __init__(self, agent: Agent) -> None:
        self._agent = agent
        # the host's settings are its own service, registered before any agent and never
        # replaced: the limit is read once per agent, not once per tool call
        ctx = agent.ctx
        settings: HostSettings | None = ctx.find("settings") if ctx is not None else None
        self._max_result_chars = (
            DEFAULT_MAX_RESULT_CHARS if settings is None else settings.max_result_chars
        )
        self._task: asyncio.Task[None] | None = None
        self._signal = CancelSignal()
        self._listeners: list[TurnEndListener] = []
        self._stream_listeners: list[StreamListener] = []
        self._partial: list[str] = []  # text streamed so far by the model call in flight
        self._closing = False
        self._cancel_sent = False
        self._resumed: list[tuple[ToolCall, Finisher]] = []
        self.active = True
        self.last_answer: str | None = None

    @property
    def task(self) -> asyncio.Task[None] | None:
        """The task running turns, if any."""
        return self._task

    @property
    def running(self) -> bool:
        """True while a turn runs or is about to start."""
        return self._task is not None and not self._task.done()

    def wake(self) -> None:
        """Start running turns if the inbox has turn work and nothing runs yet."""
        if not self.active or self._closing or self.running or not self._has_work():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop: the message stays queued until the next wake
            return
        self._cancel_sent = False
        self._task = loop.create_task(self._run(), name=f"agent {self._agent.id}")

    def resume_calls(self, calls: Sequence[tuple[ToolCall, Finisher]]) -> None:
        """Run a turn that first finishes ``calls`` (module docstring), before queued turns."""
        self._resumed = list(calls)
        self.wake()

    def _has_work(self) -> bool:
        return bool(self._resumed) or self._agent.inbox.turn_ready()

    def interrupt(self) -> None:
        """Abort the current turn (if any): set its signal and cancel what is in flight."""
        task = self._task
        if task is None or task.done() or self._cancel_sent:
            return
        self._cancel_sent = True
        self._signal.set("interrupted")
        task.cancel()

    async def wait_idle(self) -> None:
        """Return once no turn runs (waits through turns that follow each other)."""
        while (task := self._task) is not None and not task.done():
            if task is asyncio.current_task():
                raise RuntimeError("an agent cannot wait for itself to become idle")
            await asyncio.wait([task])

    async def close(self) -> None:
        """Stop starting turns, interrupt the running one and wait for it to end."""
        self._closing = True
        self.interrupt()
        await self.wait_idle()

    def on_turn_end(self, listener: TurnEndListener) -> Disposer:
        """Call ``listener(outcome)`` after every turn; returns the disposer that removes it."""
        return _listen(self._listeners, listener)

    def on_stream(self, listener: StreamListener) -> Disposer:
        """Call ``listener(event)`` for every delta and response of this agent's model calls;
        returns the disposer that removes it."""
        return _listen(self._stream_listeners, listener)

    # -- turns -----------------------------------------------------------------------------

    async def _run(self) -> None:
        while not self._closing and self._has_work():
            try:
                await self._turn()
            except asyncio.CancelledError:
                raise
            except Exception:  # the session refused TurnStart: stop; the messages stay queued
                log_failure(log, "agent %s cannot start a turn", self._agent.id)
                return

    async def _turn(self) -> None:
        session = self._agent.session
        self._signal = CancelSignal()
        self._cancel_sent = False
        self._partial = []
        self.last_answer = None
        # a turn that finishes resumed tool calls first claims no followup at its start
        turn_id = new_id("turn_") if self._resumed else self._agent.inbox.next_turn_id()
        try:
            await session.append_async(TurnStart(turn_id))
        except asyncio.CancelledError:
            if open_turn(session.events) != turn_id:
                raise  # nothing was started
            outcome = TurnOutcome(self._agent.id, turn_id, "interrupted", None)
            if not self._cancel_sent:  # cancelled from outside: record, stop
                self._end_now(outcome)
                raise
            self._uncancel()  # interrupted while its start was written: it ends at once
            await self._end(outcome)
            return
        resumed, self._resumed = self._resumed, []
        stop: StopReason = "completed"
        error: str | None = None
        try:
            stop = await self._steps(resumed)
        except asyncio.CancelledError:
            self._keep_partial_answer()
            if not self._cancel_sent:  # cancelled from outside (e.g. loop shutdown): record, stop
                self._end_now(TurnOutcome(self._agent.id, turn_id, "interrupted", self.last_answer))
                raise
            self._uncancel()
            stop = "interrupted"
        except _ModelFailed as failure:
            stop, error = "error", str(failure)
        except Exception as failure:  # a broken session or tool layer must not kill the agent
            log_failure(log, "turn %s of agent %s failed", turn_id, self._agent.id)
            stop, error = "error", f"{type(failure).__name__}: {failure}"
        await self._end(TurnOutcome(self._agent.id, turn_id, stop, self.last_answer, error))

    @staticmethod
    def _uncancel() -> None:
        """Take back the interrupt's cancellation: the turn goes on to record its end."""
        current = asyncio.current_task()
        if current is not None:
            current.uncancel()

    async def _end(self, outcome: TurnOutcome) -> None:
        """Record the end of the turn (waiting for the write) and tell the listeners, even
        when cancelled meanwhile. An interrupt that arrives now finds nothing left to stop."""
        session = self._agent.session
        end = TurnEnd(outcome.turn_id, outcome.stop_reason, outcome.error)
        try:
            await self._despite_interrupt(session.append_async(end))
            await self._despite_interrupt(session.commit_async(durable=True))
        except Exception:
            log_failure(log, "could not record the end of turn %s", outcome.turn_id)
        finally:
            self._tell_end(outcome)

    async def _despite_interrupt(self, write: Awaitable[object]) -> None:
        """Await ``write``, which finishes even when cancelled; an interrupt of this turn that
        lands meanwhile is taken back (``_end``), any other cancellation raised."""
        try:
            await write
        except asyncio.CancelledError:
            if not self._cancel_sent:
                raise
            self._uncancel()

    def _end_now(self, outcome: TurnOutcome) -> None:
        """``_end`` for a turn cancelled from outside: written before the task stops."""
        session = self._agent.session
        try:
            session.append(TurnEnd(outcome.turn_id, outcome.stop_reason, outcome.error))
            session.commit(durable=True)
        except Exception:
            log_failure(log, "could not record the end of turn %s", outcome.turn_id)
        self._tell_end(outcome)

    def _tell_end(self, outcome: TurnOutcome) -> None:
        for listener in list(self._listeners):
            try:
                listener(outcome)
            except Exception:
                log.exception("turn-end listener of agent %s failed", self._agent.id)

    async def _steps(self, resumed: Sequence[tuple[ToolCall, Finisher]] = ()) -> StopReason:
        if resumed:  # a resumed turn starts where its step left off: no followup of its own
            await self._run_in_order([(c, partial(self._finish, c, f)) for c, f in resumed])
        inbox = self._agent.inbox
        for step in range(self._agent.max_steps):
            await inbox.claim(inbox.take(turn_start=step == 0 and not resumed))
            response = await self._call_model()
            await self._agent.session.append_async(
                MessageEvent(
                    role="assistant", content=response.text, tool_calls=response.tool_calls
                )
            )
            if response.text:
                self.last_answer = response.text
            if response.stop_reason == "max_tokens":
                await self._refuse_cut(response.tool_calls)
                return "max_tokens"
            if response.tool_calls:
                await self._run_tools(response.tool_calls)
            elif not inbox.has_steers():
                return "completed"
            if self._signal.is_set():  # a tool swallowed the cancellation
                raise asyncio.CancelledError
        return "max_steps"

    async def _call_model(self) -> ModelResponse:
        agent = self._agent
        request = ModelRequest(
            agent_id=agent.id,
            label=agent.label,
            system_prompt=agent.sections.system_prompt(),
            messages=tuple(agent.session.model_messages()),
            tools=tuple(ToolSpec(t.name, t.describe(), t.parameters) for t in agent.tools.tools()),
        )
        try:
            if streams(agent.model):
                return await self._stream(request)
            response = await agent.model.complete(request, signal=self._signal)
            self._emit(response)
            return response
        except _ModelFailed:
            raise
        except Exception as error:
            if self._signal.is_set():  # the model honoured the signal: this is the interrupt
                raise asyncio.CancelledError from error
            if isinstance(error, HostError):  # a deliberate, already readable failure
                raise _ModelFailed(error.message) from error
            raise _ModelFailed(f"model failed: {type(error).__name__}: {error}") from error

    async def _stream(self, request: ModelRequest) -> ModelResponse:
        """Consume the model's stream: deltas to the listeners, the response returned."""
        self._partial = []
        stream = self._agent.model.stream(request, signal=self._signal)  # type: ignore[attr-defined]
        async with contextlib.aclosing(stream):
            async for event in stream:
                if isinstance(event, ModelResponse):
                    self._partial = []
                    self._emit(event)
                    return event
                if isinstance(event, TextDelta):
                    self._partial.append(event.text)
                self._emit(event)
        raise _ModelFailed("model failed: its stream ended without a response")

    def _keep_partial_answer(self) -> None:
        """Record the text an interrupted stream had produced as the step's answer."""
        text, self._partial = "".join(self._partial), []
        if text:
            try:
                self._agent.session.append(MessageEvent(role="assistant", content=text))
            except Exception:
                log_failure(log, "could not record the partial answer of %s", self._agent.id)
            self.last_answer = text

    def _emit(self, event: StreamEvent) -> None:
        for listener in list(self._stream_listeners):
            try:
                listener(event)
            except Exception:
                log.exception("stream listener of agent %s failed", self._agent.id)

    # -- tools -----------------------------------------------------------------------------

    async def _run_tools(self, calls: Sequence[ToolCall]) -> None:
        """Run a step's calls, each tool looked up once: side by side when every one is
        concurrency-safe (or unknown), else in call order."""
        tools = [self._agent.tools.get(call.name) for call in calls]
        runs = [(c, partial(self._run_one, c, t)) for c, t in zip(calls, tools, strict=True)]
        if len(calls) > 1 and all(tool is None or tool.concurrency_safe for tool in tools):
            await self._run_concurrently(runs)
        else:
            await self._run_in_order(runs)

    async def _refuse_cut(self, calls: Sequence[ToolCall]) -> None:
        """Answer the calls of an answer cut at the token limit without running them."""
        if calls:
            result = ToolResult.error(CUT_TOOL_TEXT)
            await self._agent.session.append_all_async([tool_message(c, result) for c in calls])

    def _exec(self, call: ToolCall) -> ToolExec:
        agent = self._agent
        return ToolExec(
            agent=agent,
            ctx=agent.ctx,
            signal=self._signal,
            tool_call_id=call.id,
            on_progress=self._emit,
        )

    async def _run_one(self, call: ToolCall, tool: Tool | None) -> ToolResult:
        """Run ``call`` of ``tool`` (as looked up, None: no one offers it); result sized."""
        return self._sized(await run_tool(tool, call.name, call.arguments, self._exec(call)))

    async def _finish(self, call: ToolCall, finish: Finisher) -> ToolResult:
        """Give a resumed ``call`` its result through ``finish``; result sized."""
        return self._sized(await finish(self._exec(call)))

    def _sized(self, result: ToolResult) -> ToolResult:
        """``result`` cut to the host's ``max_result_chars`` (``tool_results.sized``)."""
        return sized(result, self._max_result_chars)

    async def _run_in_order(self, runs: Sequence[tuple[ToolCall, Run]]) -> None:
        try:
            for call, run in runs:
                result = await run()
                await self._agent.session.append_async(tool_message(call, result))
        except asyncio.CancelledError:
            self._answer([call for call, _ in runs], {})
            raise

    async def _run_concurrently(self, runs: Sequence[tuple[ToolCall, Run]]) -> None:
        results: dict[str, ToolResult] = {}

        async def run(call: ToolCall, running: Run) -> None:
            results[call.id] = await running()

        calls = [call for call, _ in runs]
        try:
            await asyncio.gather(*(run(call, running) for call, running in runs))
            await self._agent.session.append_all_async(
                [tool_message(call, results[call.id]) for call in calls]
            )
        except BaseException:
            self._answer(calls, results)
            raise

    def _answer(self, calls: Sequence[ToolCall], results: dict[str, ToolResult]) -> None:
        """Give every call the log holds no result for its result from ``results``, or the
        interrupted-call error (the turn is being cut short) — but while the agent closes, a
        call whose request still waits for the user, or was denied or answered: it is left
        without a result, as a kill leaves it, and a resume asks it again or gives it the
        decision's result (``host.approvals.resume``), never "interrupted"."""
        events = self._agent.session.events
        left_open = left_to_resume(events) if self._closing else set()
        for call in unanswered(events, calls):
            if call.id in left_open and call.id not in results:
                continue
            result = results.get(call.id, ToolResult.error(INTERRUPTED_TOOL_TEXT))
            self._agent.session.append(tool_message(call, result))


def _listen(listeners: list[Callable[[Any], None]], listener: Callable[[Any], None]) -> Disposer:
    """Add ``listener`` to ``listeners``; the disposer removes it (once)."""
    listeners.append(listener)

    def dispose() -> None:
        if listener in listeners:
            listeners.remove(listener)

    return dispose
