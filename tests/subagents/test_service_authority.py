"""The authorization matrix of ``followup``, ``interrupt`` and ``report_from`` (docs/subagents.md, docs/reliability.md)."""

from __future__ import annotations

import pytest

from host.agents import Agent, say
from host.cancel import CancelSignal
from host.subagents.errors import SubagentError
from host.subagents.types import ChildRequest
from tests.scenarios import Stubborn, background_tool
from tests.subagents.harness import Env
from tests.support import Gate, accepted, forged

COORD = {"kind": "coordinator"}


async def start_held(env: Env, parent: Agent, label: str) -> tuple[Agent, Gate]:
    """A continuable child of ``parent`` whose first model call is held."""
    gate = Gate()
    env.model.script(label, gate.reply(say(f"{label} done")))
    started = await env.subagents.start_continuable(
        "spawn", ChildRequest("work"), parent=parent, label=label
    )
    await gate.entered.wait()
    child = env.agents.get(started.child_id)
    assert child is not None
    return child, gate


async def expect(code: str, text: str, awaitable: object) -> None:
    with pytest.raises(SubagentError) as caught:
        await awaitable  # type: ignore[misc]
    assert (caught.value.code, caught.value.message) == (code, text)


# -- followup -------------------------------------------------------------------------------


async def test_followup_authority_matrix(env: Env) -> None:
    root = await env.root()
    other = await env.root("other")
    child, gate = await start_held(env, root, "bg")
    svc = env.subagents
    cid = child.id
    message_id = await svc.followup(root, cid, "more", source=COORD)
    assert message_id in [a.message_id for a in accepted(child)]
    assert accepted(child)[-1].source == COORD  # provenance recorded
    await expect(
        "UNAUTHORIZED",
        f'subagent "{cid}" belongs to another parent session',
        svc.followup(other, cid, "x", source=COORD),
    )
    await expect(
        "UNAUTHORIZED",
        f'subagent "{cid}" delivery requires the exact live parent agent',
        svc.followup(forged(root), cid, "x", source=COORD),
    )
    await expect(
        "UNAUTHORIZED",
        f'subagent "{cid}" belongs to another parent session',
        svc.followup(child, cid, "x", source=COORD),  # a child is not its own parent
    )
    await expect(
        "UNAVAILABLE",
        'subagent "sub_nope" is unavailable',
        svc.followup(root, "sub_nope", "x", source=COORD),
    )
    await expect(
        "UNAVAILABLE",
        'subagent "../etc" is unavailable',
        svc.followup(root, "../etc", "x", source=COORD),
    )
    signal = CancelSignal()
    signal.set()
    await expect(
        "CANCELLED",
        "cancelled before acceptance",
        svc.followup(root, cid, "x", source=COORD, signal=signal),
    )
    gate.open()
    await env.settled(cid, root)


async def test_followup_from_a_stale_parent_object_after_replacement(env: Env) -> None:
    root = await env.root()
    env.model.script("bg", say("done"))
    started = await env.subagents.start_continuable(
        "spawn", ChildRequest("go"), parent=root, label="bg"
    )
    await env.settled(started.child_id, root)
    await root.dispose()
    replacement = await env.agents.resume(root.id, label="root")
    await expect(
        "UNAUTHORIZED",
        f'subagent "{started.child_id}" delivery requires the exact live parent agent',
        env.subagents.followup(root, started.child_id, "x", source=COORD),
    )
    env.model.script("bg", say("again"))
    await env.subagents.followup(replacement, started.child_id, "more", source=COORD)
    await env.settled(started.child_id, replacement)


async def test_followup_to_a_one_shot_child_is_not_resumable(env: Env) -> None:
    root = await env.root()
    env.model.script("once", say("done"))
    run = await env.subagents.start("spawn", ChildRequest("go", label="once"), parent=root)
    await run.result()
    await expect(
        "NOT_RESUMABLE",
        f'subagent "{run.id}" has no supported continuation state and cannot be resumed; '
        "do not retry send_message with this id",
        env.subagents.followup(root, run.id, "more", source=COORD),
    )


async def test_followup_to_a_closing_child_and_while_draining(env: Env) -> None:
    root = await env.root()
    stubborn = Stubborn()
    env.add_tool(stubborn.tool())
    from host.agents import call

    env.model.script("bg", call("stubborn", text="x"), say("done"))
    started = await env.subagents.start_continuable(
        "spawn", ChildRequest("go"), parent=root, label="bg"
    )
    cid = started.child_id
    await stubborn.entered.wait()
    draining = env.subagents.drain_descendants(root)
    import asyncio

    drain_task = asyncio.ensure_future(draining)
    await stubborn.interrupted.wait()  # the release is disposing the child now
    await expect(
        "DRAINING", "subagents are draining", env.subagents.followup(root, cid, "x", source=COORD)
    )
    manager = env.subagents.manager()
    assert manager is not None
    activation = manager.activation(cid)
    assert activation is not None and activation.residency == "closing"
    child = activation.agent
    await expect(
        "DRAINING",
        "subagents are draining; report was not delivered",
        env.subagents.report_from(child, "late", delivery="next-step"),
    )
    stubborn.release.set()
    await drain_task
    assert env.agents.get(cid) is None
    assert not [a for a in accepted(root) if (a.source or {}).get("kind") == "subagent-settled"]


async def test_closing_child_refuses_followups_and_reports(env: Env) -> None:
    root = await env.root()
    stubborn = Stubborn()
    env.add_tool(stubborn.tool())
    from host.agents import call

    env.model.script("bg", call("stubborn", text="x"), say("done"))
    started = await env.subagents.start_continuable(
        "spawn", ChildRequest("go"), parent=root, label="bg"
    )
    cid = started.child_id
    await stubborn.entered.wait()
    manager = env.subagents.manager()
    assert manager is not None
    activation = manager.activation(cid)
    assert activation is not None
    import asyncio

    release = asyncio.ensure_future(manager.release(activation))
    await stubborn.interrupted.wait()
    await expect(
        "ACTIVATION_CLOSING",
        f'subagent "{cid}" is closing',
        env.subagents.followup(root, cid, "x", source=COORD),
    )
    await expect(
        "ACTIVATION_CLOSING",
        f'subagent "{cid}" is closing; report was not delivered',
        env.subagents.report_from(activation.agent, "late", delivery="quiet"),
    )
    stubborn.release.set()
    await release


async def test_another_host_holding_the_lock_is_locked(env: Env) -> None:
    root = await env.root()
    env.model.script("bg", say("done"))
    started = await env.subagents.start_continuable(
        "spawn", ChildRequest("go"), parent=root, label="bg"
    )
    await env.settled(started.child_id, root)
    from host.sessions.jsonl import JsonlPersistence
    from host.sessions.loading import load

    other_host = JsonlPersistence(env.data_dir)
    stored = await load(other_host, started.child_id)
    writer = other_host.open_writer(stored.header, create=False)
    try:
        await expect(
            "LOCKED",
            f'subagent "{started.child_id}" is in use by another host',
            env.subagents.followup(root, started.child_id, "x", source=COORD),
        )
    finally:
        writer.close()
    env.model.script("bg", say("after"))
    await env.subagents.followup(root, started.child_id, "x", source=COORD)
    await env.settled(started.child_id, root)


# -- interrupt ------------------------------------------------------------------------------


async def test_interrupt_authority_matrix(env: Env) -> None:
    root = await env.root()
    other = await env.root("other")
    env.add_tool(background_tool())
    grand_gate = Gate()
    from host.agents import call

    env.model.script("mid", call("background", text="grand"), say("mid waits"))
    env.model.script("grand", grand_gate.reply(say("grand done")))
    started = await env.subagents.start_continuable(
        "spawn", ChildRequest("go"), parent=root, label="mid"
    )
    await grand_gate.entered.wait()
    manager = env.subagents.manager()
    assert manager is not None
    mid = env.agents.get(started.child_id)
    (grand_id,) = manager.activation(mid.id).children
    grand = env.agents.get(grand_id)
    sibling, sibling_gate = await start_held(env, root, "sib")
    svc = env.subagents

    def refuses(target: str, caller: Agent, text: str) -> None:
        with pytest.raises(SubagentError) as caught:
            svc.interrupt(target, caller=caller)
        assert (caught.value.code, caught.value.message) == ("UNAUTHORIZED", text)

    refuses(mid.id, mid, f'agent "{mid.id}" cannot interrupt itself')
    refuses(
        grand_id, sibling, f'subagent "{grand_id}" is not a live descendant of agent "{sibling.id}"'
    )
    refuses(
        grand_id, other, f'subagent "{grand_id}" is not a live descendant of agent "{other.id}"'
    )
    refuses(mid.id, grand, f'subagent "{mid.id}" is not a live descendant of agent "{grand_id}"')
    refuses(root.id, mid, f'subagent "{root.id}" is not a live descendant of agent "{mid.id}"')
    refuses(
        grand_id, forged(root), f'interrupting "{grand_id}" requires the exact live ancestor agent'
    )
    svc.interrupt("sub_missing", caller=root)  # accepted no-op
    # the grandparent may interrupt the grandchild: only the current turn stops
    svc.interrupt(grand_id, caller=root)
    await env.settled(grand_id)
    assert grand_gate.cancelled
    await env.settled(mid.id, root)
    # a settled target is an accepted no-op and is not resumed
    svc.interrupt(grand_id, caller=root)
    assert env.agents.get(grand_id) is None
    sibling_gate.open()
    await env.settled(sibling.id, root)


async def test_interrupt_keeps_the_inbox(env: Env) -> None:
    root = await env.root()
    child, _gate = await start_held(env, root, "bg")
    await env.subagents.followup(root, child.id, "queued", source=COORD)
    env.subagents.interrupt(child.id, caller=root)
    await child.wait_idle()
    manager = env.subagents.manager()
    assert manager is not None
    activation = manager.activation(child.id)
    assert activation is not None and activation.residency == "waiting"  # parked followup
    env.model.script("bg", say("resumed"))
    await env.subagents.followup(root, child.id, "wake up", source=COORD)
    await env.settled(child.id, root)
    texts = [m.content for m in env.model.requests_for("bg")[-1].messages if m.role == "user"]
    assert texts[-2:] == ["queued", "wake up"]


# -- report_from ----------------------------------------------------------------------------


async def test_report_authority_matrix(env: Env) -> None:
    root = await env.root()
    child, gate = await start_held(env, root, "bg")
    svc = env.subagents
    one_shot_gate = Gate()
    env.model.script("once", one_shot_gate.reply(say("x")))
    run = await svc.start("spawn", ChildRequest("go", label="once"), parent=root)
    await one_shot_gate.entered.wait()
    one_shot = env.agents.get(run.id)
    assert one_shot is not None

    def text(agent_id: str) -> str:
        return f'agent "{agent_id}" is not a live continuable subagent and cannot report'

    await expect("UNAUTHORIZED", text(root.id), svc.report_from(root, "x", delivery="quiet"))
    await expect("UNAUTHORIZED", text(run.id), svc.report_from(one_shot, "x", delivery="quiet"))
    await expect(
        "UNAUTHORIZED", text(child.id), svc.report_from(forged(child), "x", delivery="quiet")
    )
    signal = CancelSignal()
    signal.set()
    await expect(
        "CANCELLED",
        "report was cancelled before delivery",
        svc.report_from(child, "x", delivery="next-step", signal=signal),
    )
    one_shot_gate.open()
    await run.result()
    gate.open()
    await env.settled(child.id, root)
    # the settled (stale) child object can no longer report
    await expect("UNAUTHORIZED", text(child.id), svc.report_from(child, "x", delivery="quiet"))
    # a same-id replacement is not the resident child either
    env.model.script("bg", Gate().reply(say("held")))
    await svc.followup(root, child.id, "again", source=COORD)
    manager = svc.manager()
    assert manager is not None
    resident = manager.activation(child.id)
    assert resident is not None and resident.agent is not child
    await expect("UNAUTHORIZED", text(child.id), svc.report_from(child, "x", delivery="quiet"))
    await manager.release(resident)


async def test_report_to_a_parent_that_is_not_live(env: Env) -> None:
    root = await env.root()
    child, gate = await start_held(env, root, "bg")
    await root.dispose()
    await expect(
        "PARENT_UNAVAILABLE",
        "direct parent is not live; report was not delivered",
        env.subagents.report_from(child, "x", delivery="next-step"),
    )
    gate.open()
    await env.settled(child.id)  # settles; the absent parent gets nothing
