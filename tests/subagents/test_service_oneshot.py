"""One-shot ``start``: providers, depth, the publication boundary, the first-turn descriptor."""

from __future__ import annotations

import attrs
import pytest

from host.agents import ModelRequest, call, calls, say, tool_call
from host.agents.models import ModelResponse
from host.cancel import CancelSignal
from host.sessions.model import MessageEvent, SubagentDescriptorEvent
from host.subagents.errors import SubagentError
from host.subagents.identity import Identity
from host.subagents.types import ChildRequest, Provider, ProviderCapabilities
from host.tools.filter import ToolFilter
from tests.agents.helpers import echo
from tests.subagents.harness import Env, descriptor_seqs
from tests.support import Gate


async def test_one_shot_runs_one_turn_and_settles_its_run(env: Env) -> None:
    root = await env.root()
    env.model.script("worker", say("all done"))
    run = await env.subagents.start("spawn", ChildRequest("do it", label="worker"), parent=root)
    result = await run.result()
    assert (result.child_id, result.stop_reason, result.text) == (run.id, "completed", "all done")
    assert await run.result() == result  # same value again
    assert env.agents.get(run.id) is None  # disposed, session released
    assert env.services.sessions.get(run.id) is None
    stored = await env.services.session_persistence.inspect(run.id)
    header = stored.header
    assert (header.parent_session, header.origin, header.delegation_depth) == (
        root.id,
        "subagent",
        1,
    )
    kinds = [e.kind for e in stored.events]
    # the descriptor is appended in the first turn, before the first model call
    start, descriptor = kinds.index("turn/start"), kinds.index("subagent/descriptor")
    first_assistant = next(
        i
        for i, e in enumerate(stored.events)
        if isinstance(e.body, MessageEvent) and e.body.role == "assistant"
    )
    assert start < descriptor < first_assistant
    assert descriptor_seqs(stored.events) == [descriptor]
    body = stored.events[descriptor].body
    assert isinstance(body, SubagentDescriptorEvent)
    assert body.descriptor == {
        "version": 2,
        "mode": "one-shot",
        "provider": "spawn",
        "label": "worker",
    }
    index = env.subagents.index()
    assert index is not None
    assert index.lookup(header) == Identity("one-shot", "worker", "spawn", descriptor)
    listed = await env.subagents.list_children(root.id)
    assert [(e.id, e.mode, e.label) for e in listed] == [(run.id, "one-shot", "worker")]


async def test_model_error_settles_the_run_with_partial_output(env: Env) -> None:
    root = await env.root()
    env.model.script(
        "flaky",
        calls(tool_call("echo", text="x"), text="partial so far"),
        RuntimeError("provider down"),
    )
    env.add_tool(echo)
    run = await env.subagents.start("spawn", ChildRequest("go", label="flaky"), parent=root)
    result = await run.result()
    assert result.child_id == run.id
    assert result.stop_reason == "error"
    assert result.text == "partial so far"
    assert result.error is not None and "provider down" in result.error


async def test_step_limit_settles_as_max_steps(env: Env) -> None:
    root = await env.root()
    env.add_tool(echo)
    env.model.script("loop", call("echo", text="a"), call("echo", text="b"))
    request = ChildRequest("go", label="loop", max_steps=1)
    result = await (await env.subagents.start("spawn", request, parent=root)).result()
    assert result.stop_reason == "max_steps"


async def test_cancelling_after_publication_settles_through_the_run(env: Env) -> None:
    root = await env.root()
    gate = Gate()
    env.model.script("slow", gate.reply(say("never")))
    signal = CancelSignal()
    run = await env.subagents.start(
        "spawn", ChildRequest("go", label="slow"), parent=root, signal=signal
    )
    await gate.entered.wait()
    signal.set("user")
    result = await run.result()
    assert (result.child_id, result.stop_reason) == (run.id, "interrupted")
    assert gate.cancelled
    # the descriptor was still appended in the turn (before the held model call)
    stored = await env.services.session_persistence.inspect(run.id)
    assert len(descriptor_seqs(stored.events)) == 1


@pytest.mark.parametrize("case", ["provider", "depth", "cancelled"])
async def test_a_rejection_publishes_nothing(env: Env, case: str) -> None:
    root = await env.root()
    env.subagents.register_provider(
        Provider("shallow", capabilities=ProviderCapabilities(depth_limit=0))
    )
    before_files, before_live = env.session_ids(), len(env.services.sessions.list())
    signal = CancelSignal()
    provider = {"provider": "nowhere", "depth": "shallow", "cancelled": "spawn"}[case]
    if case == "cancelled":
        signal.set()
    with pytest.raises(SubagentError) as caught:
        await env.subagents.start(provider, ChildRequest("go"), parent=root, signal=signal)
    code = {"provider": "NO_PROVIDER", "depth": "DEPTH_EXCEEDED", "cancelled": "CANCELLED"}[case]
    assert caught.value.code == code
    assert env.session_ids() == before_files
    assert len(env.services.sessions.list()) == before_live
    assert env.model.requests == []


async def test_depth_error_message_is_clear(env: Env) -> None:
    root = await env.root()
    env.subagents.register_provider(
        Provider("flat", capabilities=ProviderCapabilities(depth_limit=0))
    )
    with pytest.raises(SubagentError, match='depth 1: provider "flat" allows at most depth 0'):
        await env.subagents.start("flat", ChildRequest("go"), parent=root)


async def test_fork_child_is_seeded_with_the_parents_context(env: Env) -> None:
    root = await env.root()
    root.followup("remember the number 7")
    await root.wait_idle()
    parent_events = len(root.session.events)
    env.model.script("forked", say("7"))
    run = await env.subagents.start(
        "fork", ChildRequest("what number?", label="forked"), parent=root
    )
    assert (await run.result()).text == "7"
    stored = await env.services.session_persistence.inspect(run.id)
    # inbox bookkeeping is not copied: the seed is the parent's other events
    assert 0 < stored.header.seed_length <= parent_events
    assert all(seq >= stored.header.seed_length for seq in descriptor_seqs(stored.events))
    (request,) = env.model.requests_for("forked")
    texts = [m.content for m in request.messages if m.role == "user"]
    assert texts == ["remember the number 7", "what number?"]


async def test_filter_persona_and_model_compose_the_child(env: Env) -> None:
    root = await env.root()
    env.add_tool(echo)
    env.subagents.register_provider(
        Provider(
            "careful",
            capabilities=ProviderCapabilities(persona="You are careful."),
        )
    )
    seen: list[ModelRequest] = []

    def capture(request: ModelRequest) -> ModelResponse:
        seen.append(request)
        return say("ok")

    env.model.script("limited", capture)
    request = ChildRequest("go", label="limited", tool_filter=ToolFilter(allow=[]))
    await (await env.subagents.start("careful", request, parent=root)).result()
    (made,) = seen
    assert made.tools == ()
    assert "You are careful." in made.system_prompt


async def test_providers_register_once_and_unregister(env: Env) -> None:
    dispose = env.subagents.register_provider(Provider("extra"))
    with pytest.raises(SubagentError) as caught:
        env.subagents.register_provider(Provider("extra"))
    assert caught.value.code == "DUPLICATE_PROVIDER"
    with pytest.raises(SubagentError) as again:
        env.subagents.register_provider(Provider("spawn"))
    assert again.value.code == "DUPLICATE_PROVIDER"
    dispose()
    dispose()
    root = await env.root()
    with pytest.raises(SubagentError) as missing:
        await env.subagents.start("extra", ChildRequest("go"), parent=root)
    assert missing.value.code == "NO_PROVIDER"


async def test_may_delegate_follows_the_depth_limit(env: Env) -> None:
    env.subagents.register_provider(
        Provider("one-level", capabilities=ProviderCapabilities(depth_limit=1))
    )
    root = await env.root()
    header = root.session.header
    assert env.subagents.may_delegate("one-level", header)
    deeper = attrs.evolve(header, delegation_depth=1)
    assert not env.subagents.may_delegate("one-level", deeper)
    assert not env.subagents.may_delegate("nowhere", header)
