"""One-shot children: publish, run the prompt as one followup turn, dispose, settle the run.

Creation is the publication boundary. Everything that can reject (provider, depth, signal,
setup) runs before ``AgentRegistry.create`` publishes the child; from then on every outcome —
an error stop, an interrupt, a cancelled signal, a failed send — settles through the returned
``SubagentRun``, which keeps the child's id.

The child records its one-shot descriptor **in its first turn, before its first model call**:
the child's model is wrapped so that the first call appends the descriptor (then records it in
the identity index) before the real model runs. A first turn that ends before any model call
(an immediate interrupt) appends the descriptor at its end, so a settled one-shot child always
has exactly one own descriptor.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from host.agents.agent import Agent
from host.agents.driver import TurnOutcome
from host.agents.models import Model, ModelRequest, ModelResponse
from host.agents.registry import AgentSetup
from host.cancel import CancelSignal, cancelled
from host.disposal import Disposer
from host.errors import log_failure
from host.sessions.model import SessionHeader
from host.subagents.children import descriptor_event
from host.subagents.descriptors import OneShotDescriptor
from host.subagents.index import IdentityIndex
from host.subagents.types import RunResult

log = logging.getLogger(__name__)


class DescriptorFirst:
    """A model wrapper that appends the child's descriptor before the first model call."""

    def __init__(
        self,
        inner: Model,
        agent: Agent,
        descriptor: OneShotDescriptor,
        index: IdentityIndex | None,
    ) -> None:
        self.inner = inner
        self.agent = agent
        self.descriptor = descriptor
        self.index = index
        self.appended = False

    def ensure_appended(self) -> None:
        """Append the descriptor once (then record it in the index); raises if the append does."""
        if self.appended:
            return
        self.appended = True
        header: SessionHeader = self.agent.session.header
        event = self.agent.session.append(descriptor_event(self.descriptor))
        if self.index is not None:
            self.index.record(header, self.descriptor, event.seq)

    async def complete(self, request: ModelRequest, *, signal: CancelSignal) -> ModelResponse:
        """Append the descriptor if still due, then ask the real model."""
        self.ensure_appended()
        return await self.inner.complete(request, signal=signal)


def wrap_model_step(
    descriptor: OneShotDescriptor, index: IdentityIndex | None, holder: list[DescriptorFirst]
) -> Callable[[AgentSetup], Disposer]:
    """A setup step installing ``DescriptorFirst`` around the child's model."""

    def install(setup: AgentSetup) -> Disposer:
        agent = setup.agent
        wrapper = DescriptorFirst(agent.model, agent, descriptor, index)
        agent.model = wrapper
        holder.append(wrapper)
        return lambda: None

    return install


class OneShotRun:
    """Drives one published one-shot child to its result, then disposes it."""

    def __init__(self, child: Agent, wrapper: DescriptorFirst | None) -> None:
        self.child = child
        self.wrapper = wrapper
        self._outcome: asyncio.Future[RunResult] = asyncio.get_running_loop().create_future()
        self._unlisten = child.on_turn_end(self._on_turn_end)
        self._task: asyncio.Task[None] | None = None

    @property
    def id(self) -> str:
        """The child's id."""
        return self.child.id

    def begin(self, prompt: str, source: dict[str, object], signal: CancelSignal | None) -> None:
        """Send the prompt as the child's followup and supervise it (never raises)."""
        try:
            self.child.followup(prompt, source)
        except Exception as error:
            self._settle("error", f"{type(error).__name__}: {error}")
        self._task = asyncio.ensure_future(self._supervise(signal))

    async def result(self) -> RunResult:
        """The run's result, once the child is disposed (same value on every call)."""
        if self._task is not None:
            await asyncio.shield(self._task)
        return await asyncio.shield(self._outcome)

    def interrupt(self) -> None:
        """Stop the child's turn (the run settles as interrupted)."""
        self.child.interrupt()

    def _on_turn_end(self, outcome: TurnOutcome) -> None:
        if self.wrapper is not None and not self.wrapper.appended:
            try:
                self.wrapper.ensure_appended()
            except Exception:
                log_failure(log, "one-shot child %s could not record its descriptor", self.id)
        if not self._outcome.done():
            self._outcome.set_result(
                RunResult(self.id, outcome.stop_reason, outcome.last_answer, outcome.error)
            )

    def _settle(self, stop: str, error: str | None) -> None:
        if not self._outcome.done():
            self._outcome.set_result(
                RunResult(self.id, stop, self.child.last_answer, error)  # type: ignore[arg-type]
            )

    async def _supervise(self, signal: CancelSignal | None) -> None:
        try:
            await self._until_first_turn_end(signal)
        finally:
            self._unlisten()
            try:
                await self.child.dispose()
            except Exception:
                log.exception("disposing one-shot child %s failed", self.id)
            self._settle("error", "the subagent was disposed before its turn ended")

    async def _until_first_turn_end(self, signal: CancelSignal | None) -> None:
        idle = asyncio.ensure_future(self.child.wait_idle())
        waiters: list[asyncio.Future[Any]] = [idle, asyncio.ensure_future(_wait(self._outcome))]
        if signal is not None:
            waiters.append(asyncio.ensure_future(signal.wait()))
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
            if not self._outcome.done() and cancelled(signal):
                self.child.interrupt()
                await asyncio.wait([idle, waiters[1]], return_when=asyncio.FIRST_COMPLETED)
            if not self._outcome.done():
                if cancelled(signal):
                    self._settle("interrupted", None)
                else:
                    self._settle("error", "the subagent's turn did not run")
        finally:
            for waiter in waiters:
                waiter.cancel()


async def _wait(future: asyncio.Future[RunResult]) -> object:
    return await asyncio.shield(future)
