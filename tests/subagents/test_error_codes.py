"""The ``SubagentError`` contract: the code set of docs/subagents.md, and DUPLICATE_CHILD raised."""

from __future__ import annotations

from typing import get_args

import pytest

from host.subagents.errors import SubagentError, SubagentErrorCode
from tests.subagents.harness import Env

DOCUMENTED_CODES = {  # docs/subagents.md "Errors", in its order
    "UNAUTHORIZED",
    "NOT_RESUMABLE",
    "ACTIVATION_CLOSING",
    "PARENT_UNAVAILABLE",
    "DRAINING",
    "CANCELLED",
    "CONTINUATION_UNAVAILABLE",
    "PERSISTENCE_UNAVAILABLE",
    "NO_PROVIDER",
    "DUPLICATE_PROVIDER",
    "DUPLICATE_CHILD",
    "DEPTH_EXCEEDED",
    "ACTIVATION_SETUP_REVOKED",
    "ACTIVATION_SETUP_RELEASE_FAILED",
    "SUBAGENT_CONTROL_PROJECTIONS_UNAVAILABLE",
    "SUBAGENT_CONTROL_SESSION_STORE_UNAVAILABLE",
    "UNAVAILABLE",
    "LOCKED",
}


def test_the_code_set_is_the_designs() -> None:
    codes = get_args(SubagentErrorCode)
    assert len(codes) == len(set(codes))
    assert set(codes) == DOCUMENTED_CODES


async def test_a_child_live_outside_the_manager_is_a_duplicate_child(env: Env) -> None:
    root, child_id = await env.settled_child("bg")
    outside = await env.agents.resume(child_id, label="bg")  # live, but no ChildActivation
    before = list(outside.session.events)
    with pytest.raises(SubagentError) as caught:
        await env.subagents.followup(root, child_id, "again", source={"kind": "coordinator"})
    assert (caught.value.code, caught.value.message) == (
        "DUPLICATE_CHILD",
        f'subagent "{child_id}" is live outside the continuation manager',
    )
    assert env.activation(child_id) is None
    assert list(outside.session.events) == before  # nothing delivered
