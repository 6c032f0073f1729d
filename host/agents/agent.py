"""The agent: a model in a loop over a durable session, with tools, prompt sections and an inbox.

An ``Agent`` is built (usually by the ``AgentRegistry``) around a live session; its id is the
session id. Messages arrive through ``followup``/``steer``/``inject`` (synchronous, returning
the ``MessageId``); the driver runs one turn at a time. ``dispose`` ends a running turn as
interrupted, flushes the session and runs the disposers the registry recorded (unregistration,
setup installations, releasing the session).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Final, Literal, Protocol

from host.agents.driver import Driver, Finisher, StreamListener, TurnEndListener
from host.agents.inbox import EventLog, Inbox, MessageId
from host.agents.models import Model
from host.agents.prompt import SectionView
from host.disposal import Disposer, Scope
from host.services import Lookup
from host.sessions.model import MessageEvent, SessionHeader, ToolCall
from host.sessions.persistence import Voice
from host.tools.scope import ToolView

DEFAULT_MAX_STEPS = 50

AgentStatus = Literal["running", "idle"]


class AgentSession(EventLog, Protocol):
    """What an agent needs from its session (``host.sessions.store.Session`` provides it): the
    log its inbox writes to, and more."""

    @property
    def id(self) -> str:
        """The session id (= the agent id)."""
        ...

    @property
    def header(self) -> SessionHeader:
        """The immutable header."""
        ...

    def commit(self, durable: bool = False) -> None:
        """Flush; ``durable=True`` forces the fsync the policy promises at turn ends."""
        ...

    async def commit_async(self, durable: bool = False) -> None:
        """``commit`` without blocking the event loop while storage syncs."""
        ...

    def model_messages(self) -> Sequence[MessageEvent]:
        """The messages the model sees (compaction summary + visible messages)."""
        ...

    def voice(self) -> Voice | None:
        """The right to send messages on behalf of the session (``Voice``), or None when it is
        stored nowhere."""
        ...


class Agent:
    """One live agent. ``status`` is ``"running"`` while a turn runs, else ``"idle"``.

    ``ctx`` is the service context its tool calls receive (the host's ``Services``; None for an
    agent built without services): the host looks its services up there with ``find``.
    """

    def __init__(
        self,
        session: AgentSession,
        model: Model,
        tools: ToolView,
        sections: SectionView,
        *,
        inbox: Inbox | None = None,
        label: str | None = None,
        max_steps: int = DEFAULT_MAX_STEPS,
        ctx: Lookup | None = None,
        active: bool = True,
    ) -> None:
        if max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        self.session = session
        self.id: Final[str] = session.id
        """The agent id, which is its session id."""
        self.model = model
        self.tools = tools
        self.sections = sections
        self.inbox = inbox if inbox is not None else Inbox(session, owner=session.id)
        self.label = label
        self.max_steps = max_steps
        self.ctx = ctx
        self._driver = Driver(self)
        self._driver.active = active
        self.inbox.bind(self._driver.wake)
        self._scope = Scope(f"agent {session.id}")
        self._disposal: asyncio.Future[None] | None = None
        self._held = False

    def __repr__(self) -> str:
        return f"Agent({self.id!r}, label={self.label!r}, status={self.status!r})"

    @property
    def status(self) -> AgentStatus:
        """``"running"`` while a turn runs (or is about to start), else ``"idle"``."""
        return "running" if self._driver.running else "idle"

    @property
    def last_answer(self) -> str | None:
        """The latest non-empty assistant text of the current or last turn (None if none)."""
        return self._driver.last_answer

    @property
    def closed(self) -> bool:
        """True once ``dispose`` has begun."""
        return self._disposal is not None

    # -- inbox -----------------------------------------------------------------------------

    def followup(self, content: str, source: dict[str, Any] | None = None) -> MessageId:
        """Queue ``content`` as its own next turn; wakes an idle (or parked) agent."""
        return self.inbox.accept("followup", content, source)

    def steer(self, content: str, source: dict[str, Any] | None = None) -> MessageId:
        """Join the running turn at its next step, or wake an idle (or parked) agent."""
        return self.inbox.accept("steer", content, source)

    def inject(self, content: str, source: dict[str, Any] | None = None) -> MessageId:
        """Quiet context for the next step; never wakes the agent."""
        return self.inbox.accept("inject", content, source)

    def interrupt(self, *, keep_inbox: bool = True) -> None:
        """Abort only the current turn; queued messages stay parked until the next waking send.

        With ``keep_inbox=False`` queued messages are dropped instead (recorded as claimed).
        """
        if keep_inbox:
            self.inbox.park()
        else:
            self.inbox.discard()
        self._driver.interrupt()

    def resume_calls(self, calls: Sequence[tuple[ToolCall, Finisher]]) -> None:
        """Finish tool calls the log left without results (a resumed agent): the next turn
        gives each its result from its finisher, in order, then goes on as usual."""
        self._driver.resume_calls(calls)

    def activate(self) -> None:
        """Let turns run (an agent built with ``active=False`` queues messages but runs nothing
        until its registry publishes it) and start one if followups or steers wait."""
        self._driver.active = not self._held
        self._driver.wake()

    def hold(self) -> None:
        """Run no turn, now or once activated: messages are still accepted and logged, and
        stay queued (a root that a program outside the host speaks for, as ``mcp serve``'s
        client does, reads what its subagents send it instead of a model answering it)."""
        self._held = True
        self._driver.active = False

    # -- turns -----------------------------------------------------------------------------

    async def wait_idle(self) -> None:
        """Return once no turn runs and none is about to start."""
        await self._driver.wait_idle()

    def on_turn_end(self, listener: TurnEndListener) -> Disposer:
        """Call ``listener(outcome)`` after every turn; returns the disposer that removes it."""
        return self._driver.on_turn_end(listener)

    def on_stream(self, listener: StreamListener) -> Disposer:
        """Call ``listener(event)`` with every text and tool-call delta of this agent's model
        calls as it arrives, then with each call's complete ``ModelResponse``; returns the
        disposer that removes it. Deltas are never written to the session."""
        return self._driver.on_stream(listener)

    # -- lifetime --------------------------------------------------------------------------

    def add_disposer(self, disposer: Disposer) -> Disposer:
        """Run ``disposer`` when the agent is disposed (newest first)."""
        return self._scope.add(disposer)

    async def dispose(self) -> None:
        """End a running turn as interrupted, flush the session, run the disposers. Idempotent.

        Every disposer is attempted; failures (and a failed flush) raise one ``ExceptionGroup``.
        """
        if self._disposal is None:
            if self._driver.task is asyncio.current_task():
                raise RuntimeError("an agent cannot dispose itself from inside its own turn")
            self._disposal = asyncio.ensure_future(self._dispose())
        await asyncio.shield(self._disposal)

    async def _dispose(self) -> None:
        self.inbox.close()
        await self._driver.close()
        failures: list[Exception] = []
        try:
            self.session.commit(durable=True)
        except Exception as error:
            failures.append(error)
        try:
            self._scope.dispose()
        except ExceptionGroup as group:
            failures.extend(group.exceptions)
        if failures:
            raise ExceptionGroup(f"disposing agent {self.id} failed", failures)
