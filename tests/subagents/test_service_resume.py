"""Cold resume (same host, new host), concurrency, NOT_RESUMABLE, depth, drain and shutdown."""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path
from typing import Any

import pytest

from host.agents import call, say
from host.sessions.model import MessageEvent, SessionHeader, SubagentDescriptorEvent
from host.subagents.errors import SubagentError
from host.subagents.types import ChildRequest, Provider, ProviderCapabilities
from tests.scenarios import background_tool, user_messages
from tests.subagents.harness import Env
from tests.support import Gate, accepted

COORD = {"kind": "coordinator"}
NOT_RESUMABLE = (
    'subagent "{}" has no supported continuation state and cannot be resumed; '
    "do not retry send_message with this id"
)


async def settled_child(env: Env, root: Any, answer: str = "first answer") -> str:
    env.model.script("bg", say(answer))
    started = await env.subagents.start_continuable(
        "spawn", ChildRequest("first task"), parent=root, label="bg"
    )
    await env.settled(started.child_id, root)
    return started.child_id


async def test_cold_resume_after_settlement_keeps_history(env: Env) -> None:
    root = await env.root()
    cid = await settled_child(env, root)
    assert env.agents.get(cid) is None
    env.model.script("bg", say("second answer"))
    message_id = await env.subagents.followup(root, cid, "second task", source=COORD)
    child = env.agents.get(cid)
    assert child is not None and message_id in [a.message_id for a in accepted(child)]
    await env.settled(cid, root)
    request = env.model.requests_for("bg")[-1]
    texts = [m.content for m in request.messages]
    assert texts[:3] == ["first task", "first answer", "second task"]
    notices = [m.content for m in user_messages(root)]
    assert len(notices) == 2 and notices[1].endswith("Its closing message:\nsecond answer")
    stored = await env.services.session_persistence.inspect(cid)
    assert sum(isinstance(e.body, SubagentDescriptorEvent) for e in stored.events) == 1


async def test_cold_resume_on_a_new_host_keeps_label_history_and_depth(tmp_path: Path) -> None:
    first = Env(tmp_path / "data")
    root = await first.root()
    root_id = root.id
    cid = await settled_child(first, root)
    await first.close()

    second = Env(tmp_path / "data")
    try:
        root2 = await second.agents.resume(root_id, label="root")
        second.model.script("bg", say("after restart"))
        await second.subagents.followup(root2, cid, "continue", source=COORD)
        child = second.agents.get(cid)
        assert child is not None
        assert child.label == "bg"
        assert child.session.header.delegation_depth == 1
        await second.settled(cid, root2)
        (request,) = second.model.requests_for("bg")
        assert [m.content for m in request.messages][:3] == [
            "first task",
            "first answer",
            "continue",
        ]
        listed = await second.subagents.list_children(root_id)
        assert [(e.id, e.mode, e.label, e.activity) for e in listed] == [
            (cid, "continuable", "bg", "inactive")
        ]
    finally:
        await second.close()


async def test_two_concurrent_followups_materialize_a_cold_child_once(env: Env) -> None:
    root = await env.root()
    cid = await settled_child(env, root)
    resumes: list[str] = []
    real_resume = env.agents.resume

    async def counting(session_id: str, **kwargs: Any) -> Any:
        resumes.append(session_id)
        return await real_resume(session_id, **kwargs)

    env.agents.resume = counting  # type: ignore[method-assign]
    gate = Gate()
    env.model.script("bg", gate.reply(say("one")), say("two"))
    first, second = await asyncio.gather(
        env.subagents.followup(root, cid, "a", source=COORD),
        env.subagents.followup(root, cid, "b", source=COORD),
    )
    assert resumes == [cid]
    child = env.agents.get(cid)
    ids = [a.message_id for a in accepted(child)]
    assert first in ids and second in ids and first != second
    gate.open()
    await env.settled(cid, root)


async def test_a_one_shot_or_corrupt_child_is_not_resumable(env: Env) -> None:
    root = await env.root()
    env.model.script("once", say("x"))
    run = await env.subagents.start("spawn", ChildRequest("go", label="once"), parent=root)
    await run.result()
    store = env.services.sessions
    for name, descriptors in [("nodesc", []), ("twodesc", [1, 2]), ("newer", [3])]:
        header = SessionHeader(id=name, parent_session=root.id, origin="subagent")
        session = store.new(header)
        store.publish(session)
        for version in descriptors:
            data = {"version": version, "mode": "continuable", "provider": "spawn", "label": "z"}
            if version == 1:
                data["version"] = 2
            session.append(SubagentDescriptorEvent(data))
        session.append(MessageEvent(role="user", content="hi"))
        store.release(name)
    for cid in (run.id, "nodesc", "twodesc", "newer"):
        with pytest.raises(SubagentError) as caught:
            await env.subagents.followup(root, cid, "more", source=COORD)
        assert (caught.value.code, caught.value.message) == (
            "NOT_RESUMABLE",
            NOT_RESUMABLE.format(cid),
        )
        assert env.agents.get(cid) is None


async def test_an_ordinary_session_is_unavailable(env: Env) -> None:
    root = await env.root()
    fork = env.services.sessions.fork(root.id)
    env.services.sessions.release(fork.id)
    with pytest.raises(SubagentError) as caught:
        await env.subagents.followup(root, fork.id, "x", source=COORD)
    assert (caught.value.code, caught.value.message) == (
        "UNAVAILABLE",
        f'subagent "{fork.id}" is unavailable',
    )


async def test_depth_is_recorded_and_limited(env: Env) -> None:
    root = await env.root()
    env.subagents.register_provider(
        Provider("one-level", capabilities=ProviderCapabilities(depth_limit=1))
    )
    gate = Gate()
    env.model.script("bg", gate.reply(say("ok")))
    started = await env.subagents.start_continuable(
        "one-level", ChildRequest("go"), parent=root, label="bg"
    )
    child = env.agents.get(started.child_id)
    assert child is not None and child.session.header.delegation_depth == 1
    with pytest.raises(SubagentError) as caught:
        await env.subagents.start_continuable(
            "one-level", ChildRequest("deeper"), parent=child, label="g"
        )
    assert caught.value.code == "DEPTH_EXCEEDED"
    with pytest.raises(SubagentError):
        await env.subagents.start("one-level", ChildRequest("deeper"), parent=child)
    gate.open()
    await env.settled(child.id, root)


async def test_drain_releases_descendants_child_first_without_notices(env: Env) -> None:
    root = await env.root()
    env.add_tool(background_tool())
    grand_gate, other_gate = Gate(), Gate()
    env.model.script("mid", call("background", text="grand"), say("mid waits"))
    env.model.script("grand", grand_gate.reply(say("never")))
    env.model.script("other", other_gate.reply(say("never")))
    mid = await env.subagents.start_continuable(
        "spawn", ChildRequest("go"), parent=root, label="mid"
    )
    other = await env.subagents.start_continuable(
        "spawn", ChildRequest("go"), parent=root, label="other"
    )
    await grand_gate.entered.wait()
    await other_gate.entered.wait()
    manager = env.subagents.manager()
    assert manager is not None
    (grand_id,) = manager.activation(mid.child_id).children
    order: list[str] = []
    for activation in manager.residents():
        activation.agent.add_disposer(functools.partial(order.append, activation.id))
    await env.subagents.drain_descendants(root)
    assert manager.residents() == []
    assert order.index(grand_id) < order.index(mid.child_id)
    assert set(order) == {grand_id, mid.child_id, other.child_id}
    await root.wait_idle()
    assert user_messages(root) == []  # released quietly
    # admission is open again afterwards: the child cold-resumes
    env.model.script("other", say("back"))
    await env.subagents.followup(root, other.child_id, "again", source=COORD)
    await env.settled(other.child_id, root)


async def test_shutdown_releases_residents_and_closes_admission(env: Env) -> None:
    root = await env.root()
    gate = Gate()
    env.model.script("bg", gate.reply(say("never")))
    started = await env.subagents.start_continuable(
        "spawn", ChildRequest("go"), parent=root, label="bg"
    )
    await gate.entered.wait()
    await env.subagents.aclose()
    assert env.agents.get(started.child_id) is None
    with pytest.raises(SubagentError) as caught:
        await env.subagents.followup(root, started.child_id, "x", source=COORD)
    assert caught.value.code == "DRAINING"
    stored = await env.services.session_persistence.inspect(started.child_id)
    assert stored.events[-1].kind == "turn/end"
