"""``start_continuable``, residency and settlement notices, reports, missing services."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from host.agents import AgentRegistry, call, calls, say, tool_call
from host.agents.models import ModelResponse
from host.agents.registry import AgentSetup
from host.sessions.model import InboxAccepted, SubagentDescriptorEvent
from host.subagents.errors import SubagentError
from host.subagents.identity import Identity
from host.subagents.types import ChildRequest
from tests.agents.helpers import echo
from tests.scenarios import background_tool, user_messages
from tests.subagents.harness import Env, report_tool
from tests.support import Gate, accepted

FINISHED = "finished and will do no further work unless you send it more."


async def test_start_returns_at_acceptance_with_the_descriptor_seeded(env: Env) -> None:
    root = await env.root()
    gate = Gate()
    env.model.script("bg", gate.reply(say("done")))
    started = await env.subagents.start_continuable(
        "spawn", ChildRequest("research"), parent=root, label="bg"
    )
    child = env.agents.get(started.child_id)
    assert child is not None
    header = child.session.header
    assert (header.parent_session, header.origin, header.delegation_depth) == (
        root.id,
        "subagent",
        1,
    )
    first = child.session.events[header.seed_length]
    assert isinstance(first.body, SubagentDescriptorEvent)
    assert first.body.descriptor == {
        "version": 2,
        "mode": "continuable",
        "provider": "spawn",
        "label": "bg",
    }
    assert [a.message_id for a in accepted(child)] == [started.message_id]
    index = env.subagents.index()
    assert index is not None
    assert index.lookup(header) == Identity("continuable", "bg", "spawn", header.seed_length)
    manager = env.subagents.manager()
    assert manager is not None
    activation = manager.activation(child.id)
    assert activation is not None and activation.ancestors == (root,)
    await gate.entered.wait()
    assert activation.residency == "running"
    gate.open()
    await env.settled(child.id, root)
    assert env.agents.get(child.id) is None
    assert activation.residency == "settled"


@pytest.mark.parametrize(
    ("stop", "summary", "closing"),
    [
        ("completed", FINISHED, "\n\nIts closing message:\nall done"),
        ("interrupted", "was stopped before it finished.", "\n\nIt left no closing message."),
        ("max_steps", "ran out of steps before it finished.", "\n\nIts closing message:\nstep"),
        ("max_tokens", "ran out of tokens before it finished.", "\n\nIts closing message:\ncut"),
        ("error", "failed before it finished.", "\n\nIt left no closing message."),
    ],
)
async def test_settlement_notice_texts(env: Env, stop: str, summary: str, closing: str) -> None:
    root = await env.root()
    env.add_tool(echo)
    gate = Gate()
    script = {
        "completed": [say("all done")],
        "interrupted": [gate.reply(say("never"))],
        "max_steps": [calls(tool_call("echo", text="a"), text="step")],
        "max_tokens": [ModelResponse(text="cut", stop_reason="max_tokens")],
        "error": [RuntimeError("boom")],
    }[stop]
    env.model.script("bg", *script)
    request = ChildRequest("go", max_steps=1 if stop == "max_steps" else None)
    started = await env.subagents.start_continuable("spawn", request, parent=root, label="bg")
    if stop == "interrupted":
        await gate.entered.wait()
        env.subagents.interrupt(started.child_id, caller=root)
    await env.settled(started.child_id, root)
    (notice,) = user_messages(root)
    assert notice.content == f"Background subagent {started.child_id} {summary}{closing}"
    assert notice.source == {"kind": "subagent-settled", "sender_session_id": started.child_id}
    (delivered,) = accepted(root)
    assert delivered.delivery == "followup"  # the parent was idle


async def test_a_busy_parent_gets_the_notice_as_a_steer(env: Env) -> None:
    root = await env.root()
    parent_gate = Gate()
    env.model.script("root", parent_gate.reply(say("root answer")))
    root.followup("work on something")
    await parent_gate.entered.wait()
    started = await env.subagents.start_continuable(
        "spawn", ChildRequest("go"), parent=root, label="bg"
    )
    manager = env.subagents.manager()
    assert manager is not None
    activation = manager.activation(started.child_id)
    assert activation is not None
    await activation.wait_done()
    notices = [a for a in accepted(root) if (a.source or {}).get("kind") == "subagent-settled"]
    assert [n.delivery for n in notices] == ["steer"]
    parent_gate.open()
    await root.wait_idle()


async def test_a_report_reaches_the_parent_before_the_settlement_notice(env: Env) -> None:
    root = await env.root()
    env.add_tool(report_tool())
    env.model.script("bg", call("report", text="found it"), say("closing words"))
    started = await env.subagents.start_continuable(
        "spawn", ChildRequest("look"), parent=root, label="bg"
    )
    await env.settled(started.child_id, root)
    texts = [m.content for m in user_messages(root)]
    assert texts[0] == f"Background subagent {started.child_id} reported:\nfound it"
    assert texts[-1].startswith(f"Background subagent {started.child_id} {FINISHED}")
    report = next(a for a in accepted(root) if a.content.endswith("found it"))
    assert report.delivery == "steer"
    assert report.source == {"kind": "subagent-report", "sender_session_id": started.child_id}


async def test_quiet_reports_are_injected_and_do_not_wake_an_idle_parent(env: Env) -> None:
    root = await env.root()
    gate = Gate()
    env.model.script("bg", gate.reply(say("done")))
    started = await env.subagents.start_continuable(
        "spawn", ChildRequest("look"), parent=root, label="bg"
    )
    child = env.agents.get(started.child_id)
    assert child is not None
    message_id = await env.subagents.report_from(child, "quiet news", delivery="quiet")
    (quiet,) = accepted(root)
    assert (quiet.message_id, quiet.delivery) == (message_id, "inject")
    assert root.status == "idle"
    gate.open()
    await env.settled(started.child_id, root)
    # the injected report is claimed by the notice's turn, before the notice itself
    texts = [m.content for m in user_messages(root)]
    assert texts[0].endswith("quiet news") and FINISHED in texts[1]


async def test_nested_reports_travel_exactly_one_edge(env: Env) -> None:
    root = await env.root()
    env.add_tool(report_tool())
    env.add_tool(background_tool())
    grand_gate = Gate()
    env.model.script("mid", call("background", text="grand"), say("mid waiting"))
    env.model.script("grand", grand_gate.reply(call("report", text="deep finding")))
    env.model.script("grand", say("grand done"))
    started = await env.subagents.start_continuable(
        "spawn", ChildRequest("delegate"), parent=root, label="mid"
    )
    manager = env.subagents.manager()
    assert manager is not None
    mid = env.agents.get(started.child_id)
    await grand_gate.entered.wait()
    await mid.wait_idle()
    mid_activation = manager.activation(mid.id)
    assert mid_activation is not None
    assert mid_activation.residency == "waiting"  # quiescent but owns a resident child
    (grand_id,) = mid_activation.children
    grand_activation = manager.activation(grand_id)
    assert grand_activation is not None
    assert grand_activation.ancestors == (mid, root)
    assert env.agents.get(grand_id).session.header.delegation_depth == 2
    grand_gate.open()
    await env.settled(grand_id)
    await env.settled(mid.id, root)
    root_texts = [m.content for m in user_messages(root)]
    assert not any("deep finding" in t for t in root_texts)
    assert len(root_texts) == 1 and root_texts[0].startswith(f"Background subagent {mid.id}")
    mid_stored = await env.services.session_persistence.inspect(mid.id)
    mid_texts = [
        e.body.content for e in mid_stored.events if getattr(e.body, "role", None) == "user"
    ]
    assert f"Background subagent {grand_id} reported:\ndeep finding" in mid_texts
    assert any(t.startswith(f"Background subagent {grand_id} {FINISHED}") for t in mid_texts)


async def test_continuation_unavailable_without_agents(tmp_path: Path) -> None:
    env = Env(tmp_path / "data", environ={"AGENT_HOST_DISABLE_PLUGINS": "agents"})
    try:
        services = env.services
        assert services.find("agents") is None
        private = AgentRegistry(
            services.sessions, services.models, env.host.tools, env.host.prompt_sections
        )
        root = await private.create(label="root")
        service = env.subagents
        with pytest.raises(SubagentError) as caught:
            await service.start_continuable("spawn", ChildRequest("go"), parent=root, label="x")
        assert caught.value.code == "CONTINUATION_UNAVAILABLE"
        with pytest.raises(SubagentError) as followup:
            await service.followup(root, "sub_x", "hi", source=None)
        assert followup.value.code == "CONTINUATION_UNAVAILABLE"
        service.interrupt("anything", caller=root)  # nothing resident: accepted no-op
        # one-shot children still run without the agents service
        env.model.script("solo", say("fine"))
        run = await service.start("spawn", ChildRequest("go", label="solo"), parent=root)
        assert (await run.result()).text == "fine"
        await private.dispose_all()
    finally:
        await env.close()


async def test_persistence_unavailable_without_session_persistence(tmp_path: Path) -> None:
    env = Env(tmp_path / "data", environ={"AGENT_HOST_DISABLE_PLUGINS": "session_persistence"})
    try:
        root = await env.root()
        with pytest.raises(SubagentError) as caught:
            await env.subagents.start_continuable(
                "spawn", ChildRequest("go"), parent=root, label="x"
            )
        assert caught.value.code == "PERSISTENCE_UNAVAILABLE"
        assert env.subagents.index() is None
    finally:
        await env.close()


async def test_setup_contributions_apply_at_creation_and_revocation_blocks_nothing_later(
    env: Env,
) -> None:
    root = await env.root()
    seen: list[str] = []

    def contribute(setup: AgentSetup) -> Callable[[], object]:
        seen.append(setup.id)
        return lambda: seen.append("released")

    dispose = env.subagents.register_continuable_setup(contribute)
    env.model.script("bg", say("done"))
    started = await env.subagents.start_continuable(
        "spawn", ChildRequest("go"), parent=root, label="bg"
    )
    await env.settled(started.child_id, root)
    assert seen == [started.child_id, "released"]
    dispose()


async def test_a_failing_contribution_publishes_nothing(env: Env) -> None:
    root = await env.root()

    def broken(setup: AgentSetup) -> Callable[[], object]:
        raise RuntimeError("cannot install")

    env.subagents.register_continuable_setup(broken)
    before = env.session_ids()
    with pytest.raises(RuntimeError, match="cannot install"):
        await env.subagents.start_continuable("spawn", ChildRequest("go"), parent=root, label="x")
    assert env.session_ids() == before
    manager = env.subagents.manager()
    assert manager is not None and manager.residents() == []


async def test_notice_source_names_the_child_and_accepted_ids_match(env: Env) -> None:
    root = await env.root()
    env.model.script("bg", say("ok"))
    started = await env.subagents.start_continuable(
        "spawn", ChildRequest("go"), parent=root, label="bg"
    )
    await env.settled(started.child_id, root)
    (accept,) = [a for a in accepted(root) if isinstance(a, InboxAccepted)]
    (message,) = user_messages(root)
    assert message.message_id == accept.message_id
