"""Streaming through the driver: listeners see deltas then the response, the log sees one
message, an interrupt keeps the partial text, models with resources are closed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from host.agents import AgentRegistry, ModelRegistry, ModelRequest, call, say
from host.agents import models as models_module
from host.agents.models import ModelResponse, StreamEvent, TextDelta, ToolCallDelta, streams
from host.agents.scripted import ScriptedModel
from host.cancel import CancelSignal
from host.sessions.model import MessageEvent, TurnEnd
from tests.support import bodies, stop_reasons


def assistant_texts(agent: object) -> list[str]:
    return [m.content for m in bodies(agent, MessageEvent) if m.role == "assistant"]


async def test_listeners_see_words_then_the_response_and_the_log_one_message(
    agents: AgentRegistry, model: ScriptedModel
) -> None:
    model.script("w", call("echo", text="hi"), say("It said hi."))
    agent = await agents.create(label="w")
    seen: list[StreamEvent] = []
    agent.on_stream(seen.append)
    agent.followup("go")
    await agent.wait_idle()

    first_call, *rest = seen
    assert first_call == ToolCallDelta(0, "call_1", "echo", '{"text": "hi"}')
    assert isinstance(rest[0], ModelResponse) and rest[0].tool_calls
    assert rest[1:] == [TextDelta("It"), TextDelta(" said"), TextDelta(" hi."), rest[-1]]
    assert isinstance(rest[-1], ModelResponse) and rest[-1].text == "It said hi."
    assert assistant_texts(agent) == ["", "It said hi."]  # deltas are never logged
    assert stop_reasons(agent) == ["completed"]


async def test_a_failing_listener_does_not_break_the_turn(
    agents: AgentRegistry, model: ScriptedModel
) -> None:
    model.script("w", say("fine"))
    agent = await agents.create(label="w")

    def broken(event: StreamEvent) -> None:
        raise RuntimeError("listener bug")

    agent.on_stream(broken)
    seen: list[StreamEvent] = []
    dispose = agent.on_stream(seen.append)
    agent.followup("go")
    await agent.wait_idle()
    assert stop_reasons(agent) == ["completed"] and len(seen) == 2
    dispose()
    agent.followup("again")
    await agent.wait_idle()
    assert len(seen) == 2  # removed


class HeldStream:
    """A streaming model that sends two words, then waits until it is cancelled."""

    def __init__(self) -> None:
        self.closed = asyncio.Event()
        self.sent = asyncio.Event()

    async def complete(self, request: ModelRequest, *, signal: CancelSignal) -> ModelResponse:
        raise AssertionError("a streaming model is streamed")

    async def stream(
        self, request: ModelRequest, *, signal: CancelSignal
    ) -> AsyncIterator[StreamEvent]:
        try:
            yield TextDelta("Half")
            yield TextDelta(" an answer")
            self.sent.set()
            await asyncio.Event().wait()
            yield ModelResponse("never")
        finally:
            self.closed.set()


async def test_an_interrupt_mid_stream_keeps_the_text_so_far(
    agents: AgentRegistry, models: ModelRegistry
) -> None:
    held = HeldStream()
    assert streams(held)
    models.register("held", held, owner="test")
    agent = await agents.create(label="w", model="held")
    agent.followup("go")
    await held.sent.wait()
    agent.interrupt()
    await agent.wait_idle()

    assert held.closed.is_set()  # the stream was closed, not left hanging
    assert assistant_texts(agent) == ["Half an answer"]
    assert stop_reasons(agent) == ["interrupted"]
    assert agent.last_answer == "Half an answer"


class Unfinished(HeldStream):
    """A stream that ends after its deltas without the response."""

    async def stream(
        self, request: ModelRequest, *, signal: CancelSignal
    ) -> AsyncIterator[StreamEvent]:
        yield TextDelta("Half")


async def test_a_stream_without_its_response_ends_the_turn_with_one_error(
    agents: AgentRegistry, models: ModelRegistry
) -> None:
    models.register("unfinished", Unfinished(), owner="test")
    agent = await agents.create(label="w", model="unfinished")
    agent.followup("go")
    await agent.wait_idle()
    [end] = bodies(agent, TurnEnd)
    assert (end.stop_reason, end.error) == (
        "error",
        "model failed: its stream ended without a response",
    )
    assert assistant_texts(agent) == []


async def test_a_model_that_switches_streaming_off_is_called_whole(
    agents: AgentRegistry, models: ModelRegistry, model: ScriptedModel
) -> None:
    model.script("w", say("whole"))
    model.streaming = False  # type: ignore[attr-defined]
    assert not streams(model)
    agent = await agents.create(label="w")
    seen: list[StreamEvent] = []
    agent.on_stream(seen.append)
    agent.followup("go")
    await agent.wait_idle()
    assert [type(e).__name__ for e in seen] == ["ModelResponse"]


class Closable(ScriptedModel):
    def __init__(self) -> None:
        super().__init__()
        self.closes = 0

    async def aclose(self) -> None:
        self.closes += 1


async def test_the_registry_closes_models_on_unregistration_and_on_aclose() -> None:
    registry = ModelRegistry()
    unregistered, kept, never_built = Closable(), Closable(), Closable()
    dispose = registry.register("a", unregistered)
    registry.register("b", kept)
    registry.register("c", lambda: never_built)
    dispose()
    scheduled = [t for t in models_module._closing if not t.done()]  # the close runs on the loop
    assert unregistered.closes == 0 and len(scheduled) == 1
    await asyncio.gather(*scheduled)
    assert unregistered.closes == 1
    await registry.aclose()
    assert (unregistered.closes, kept.closes, never_built.closes) == (1, 1, 0)
