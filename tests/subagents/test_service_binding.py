"""The service looks its services up once per call (``BoundServices``), not once per use."""

from __future__ import annotations

from collections import Counter
from typing import Any

from host.agents import say
from host.services import Lookup
from host.subagents.types import ChildRequest
from tests.subagents.harness import Env


class Counting:
    """A service lookup that counts what it is asked for."""

    def __init__(self, inner: Lookup) -> None:
        self.inner = inner
        self.asked: Counter[str] = Counter()

    def find(self, name: str) -> Any:
        self.asked[name] += 1
        return self.inner.find(name)


async def test_each_call_binds_its_services_once(env: Env) -> None:
    root = await env.root()
    env.model.script("bg", say("done"))
    env.model.script("once", say("done"))
    lookup = Counting(env.subagents.ctx)
    env.subagents.ctx = lookup
    started = await env.subagents.start_continuable(
        "spawn", ChildRequest("research"), parent=root, label="bg"
    )
    assert lookup.asked["agents"] == 1
    lookup.asked.clear()
    run = await env.subagents.start("spawn", ChildRequest("go", label="once"), parent=root)
    assert lookup.asked["agents"] == 1
    await run.result()
    lookup.asked.clear()
    env.subagents.interrupt(started.child_id, caller=root)
    assert lookup.asked["agents"] == 1
