"""A setup-contribution plugin reloads by the registry's rules: its contribution is revoked
from resident children at once and granted again (new code) at each child's next ChildActivation."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from host.agents import ModelRequest, ModelResponse, call, say
from host.app import Host
from host.subagents.types import ChildRequest
from tests.reload.support import Plugins, scripted, tool_results

CONTRIBUTOR = """
import attrs
from host import hookimpl
from host.tools import tool

requires = ("subagents",)

@attrs.frozen
class Args:
    pass

@tool("probe", "Say which version of the contribution is installed.", Args)
async def probe(args, exec):
    return {text!r}

def contribute(setup):
    return setup.tools.register("probe", probe, owner='plugin "prober"')

@hookimpl
def activate(ctx, scope):
    scope.add(ctx.subagents.register_continuable_setup(contribute))
"""


def held(gate: asyncio.Event, entered: asyncio.Event, response: ModelResponse) -> Any:
    async def reply(request: ModelRequest) -> ModelResponse:
        entered.set()
        await gate.wait()
        return response

    return reply


async def test_revoked_from_a_resident_child_at_once_granted_again_at_its_next_activation(
    plugins: Plugins, dev_host: Callable[..., Host]
) -> None:
    plugins.install("prober", CONTRIBUTOR.format(text="v1"))
    host = dev_host({"prober"})
    service = host.services.subagents
    root = await host.services.agents.create(label="root")
    entered, gate = asyncio.Event(), asyncio.Event()
    scripted(host).script("bg", held(gate, entered, call("probe")), say("first done"))
    started = await service.start_continuable(
        "spawn", ChildRequest("start"), parent=root, label="bg"
    )
    child = host.services.agents.get(started.child_id)
    await entered.wait()
    assert child.tools.get("probe") is not None
    assert host.tools.get("probe") is None  # scope-local, never global

    plugins.write("prober", CONTRIBUTOR.format(text="v2"))
    assert host.reload("prober").ok
    assert child.tools.get("probe") is None  # revoked from the resident child at once
    assert len(service.setup) == 1  # the new version's contribution, exactly one
    gate.set()
    activation = service.manager().activation(child.id)
    await activation.wait_done()
    assert tool_results(child)[-1] == ('unknown tool "probe"', True)

    # the next ChildActivation (a cold resume) gets the new code's contribution
    scripted(host).script("bg", call("probe"), say("second done"))
    await service.followup(root, child.id, "again", source=None)
    resumed = host.services.agents.get(child.id)
    assert resumed is not None and resumed is not child
    await service.manager().activation(child.id).wait_done()
    assert tool_results(resumed)[-1] == ("v2", False)
    names = [spec.name for spec in scripted(host).requests_for("bg")[-1].tools]
    assert names.count("probe") == 1
