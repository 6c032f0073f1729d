"""Regressions found in review: a cold resume whose delivery fails must not strand the child."""

from __future__ import annotations

from host.subagents.errors import SubagentError
from tests.subagents.harness import Env


async def test_a_parent_lost_during_cold_resume_leaves_the_child_settled(env: Env) -> None:
    root, child_id = await env.settled_child("bg")

    persistence = env.services.session_persistence
    original = persistence.resume

    async def resume(session_id, **options):  # the parent goes away while the child loads
        if session_id == child_id:
            await root.dispose()
        return await original(session_id, **options)

    persistence.resume = resume
    try:
        await env.subagents.followup(root, child_id, "again", source={"kind": "coordinator"})
    except SubagentError as error:
        assert error.code == "UNAUTHORIZED"
    else:
        raise AssertionError("a stale parent delivered a message")
    stranded = env.activation(child_id)
    assert stranded is not None  # still resident, and a settlement check is on its way
    assert stranded.check is not None and not stranded.check.done()
    await env.settled(child_id)
    assert env.activation(child_id) is None  # settled again, not stranded
    assert env.agents.get(child_id) is None
    assert env.agents.store.get(child_id) is None  # session released: writer closed, lock free
