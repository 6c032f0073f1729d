"""Hot reload semantics on real files: tools change for the next model step, running calls
finish on the old code, dependents follow a replaced service, other plugins stay untouched."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any

from host import hookimpl
from host.agents import call, say
from host.app import Host
from host.plugins.watch import WatchMap
from tests.reload.support import (
    Plugins,
    ask_to_call,
    last_result,
    offered,
    plugin_tools,
    scripted,
    tools_source,
)


async def test_the_edit_cycle_through_registry_and_a_scripted_agent(
    plugins: Plugins, dev_host: Callable[..., Host]
) -> None:
    plugins.install("greeter", tools_source({"greet": "hello v1"}))
    host = dev_host({"greeter"})
    agent = await ask_to_call(host, "greet", "worker")
    assert last_result(agent) == ("hello v1", False)

    # change a tool's text
    plugins.write("greeter", tools_source({"greet": "hello v2"}))
    assert host.reload("greeter").ok
    await ask_to_call(host, "greet", "worker", agent)
    assert last_result(agent) == ("hello v2", False)

    # add a tool: offered at the next model step, exactly once
    plugins.write("greeter", tools_source({"greet": "hello v3", "wave": "waving"}))
    assert host.reload("greeter").ok
    assert plugin_tools(host, "greeter") == ["greet", "wave"]
    await ask_to_call(host, "wave", "worker", agent)
    assert last_result(agent) == ("waving", False)
    names = offered(host, "worker")
    assert names.count("greet") == 1 and names.count("wave") == 1

    # remove a tool: gone from the registry and from the next request
    plugins.write("greeter", tools_source({"wave": "still waving"}))
    assert host.reload("greeter").ok
    assert plugin_tools(host, "greeter") == ["wave"]
    await ask_to_call(host, "greet", "worker", agent)
    assert last_result(agent) == ('unknown tool "greet"', True)
    assert "greet" not in offered(host, "worker")

    # a syntax error: one line, the previous version keeps answering
    plugins.write("greeter", "def broken(:\n")
    outcome = host.reload("greeter")
    assert not outcome.ok
    assert outcome.line().startswith("reload of greeter failed, previous version kept: SyntaxError")
    assert "\n" not in outcome.line()
    assert plugin_tools(host, "greeter") == ["wave"]
    await ask_to_call(host, "wave", "worker", agent)
    assert last_result(agent) == ("still waving", False)

    # fix it
    plugins.write("greeter", tools_source({"wave": "fixed", "greet": "back"}))
    assert host.reload("greeter").ok
    assert plugin_tools(host, "greeter") == ["greet", "wave"]
    await ask_to_call(host, "greet", "worker", agent)
    assert last_result(agent) == ("back", False)
    assert offered(host, "worker").count("greet") == 1


SLOW = """
import {gate}

@tool("slow", "Hold until released.", Args)
async def tool_slow(args, exec):
    {gate}.entered.set()
    await {gate}.release.wait()
    return {text!r}

@hookimpl
def register_tools(register):
    register(tool_slow)
"""


async def test_a_running_call_finishes_on_the_old_code(
    plugins: Plugins, dev_host: Callable[..., Host], unique: Callable[[str], str]
) -> None:
    gate = unique("gate")
    (plugins.directory / f"{gate}.py").write_text("entered = release = None\n")
    try:
        held: Any = __import__(gate)
        held.entered, held.release = asyncio.Event(), asyncio.Event()
        plugins.install("slowpoke", tools_source({}) + SLOW.format(gate=gate, text="old"))
        host = dev_host({"slowpoke"})
        agent = await host.services.agents.create(label="caller")
        scripted(host).script("caller", call("slow"), say("done"), call("slow"), say("done"))
        agent.followup("go")
        await held.entered.wait()

        plugins.write("slowpoke", tools_source({}) + SLOW.format(gate=gate, text="new"))
        assert host.reload("slowpoke").ok
        held.release.set()
        await agent.wait_idle()
        assert last_result(agent) == ("old", False)  # the call started on the old code

        agent.followup("again")  # the next call runs the new code
        await agent.wait_idle()
        assert last_result(agent) == ("new", False)
    finally:
        sys.modules.pop(gate, None)


PROVIDER = """
from host import hookimpl

@hookimpl
def register_services(register):
    register("weather", {value!r})
"""

DEPENDENT = """
@tool("forecast", "Read the weather service.", Args)
async def tool_forecast(args, exec):
    return exec.ctx.weather

@hookimpl
def register_tools(register):
    register(tool_forecast)
"""


async def test_a_replaced_service_takes_its_dependents_down_and_up_around_it(
    plugins: Plugins, dev_host: Callable[..., Host]
) -> None:
    plugins.install("weather", PROVIDER.format(value="rain"))
    plugins.install("forecaster", tools_source({}, requires=("weather",)) + DEPENDENT)
    seen: list[str] = []

    class Watcher:
        requires = ("weather",)

        @staticmethod
        @hookimpl
        def activate(ctx: object, scope: object) -> None:
            seen.append(f"up:{ctx.weather}")  # type: ignore[attr-defined]
            scope.add(lambda: seen.append("down"))  # type: ignore[attr-defined]

    host = dev_host({"weather", "forecaster"}, ("watcher", Watcher))
    agent = await ask_to_call(host, "forecast", "reader")
    assert last_result(agent) == ("rain", False)
    # dev restarts the process for a service provider; Host.reload does it in process
    assert WatchMap(host.plugins).plan([plugins.path("weather")]).restart == (
        "weather provides services"
    )

    plugins.write("weather", PROVIDER.format(value="sun"))
    assert host.reload("weather").ok
    assert seen == ["up:rain", "down", "up:sun"]
    assert host.plugins.records["forecaster"].state == "active"
    assert plugin_tools(host, "forecaster") == ["forecast"]
    await ask_to_call(host, "forecast", "reader", agent)
    assert last_result(agent) == ("sun", False)


async def test_other_plugins_and_live_agents_are_untouched(
    plugins: Plugins, dev_host: Callable[..., Host]
) -> None:
    plugins.install("edited", tools_source({"first": "1"}))
    plugins.install("steady", tools_source({"stay": "steady"}))
    host = dev_host({"edited", "steady"})
    steady = host.plugins.records["steady"]
    before = (steady.obj, steady.scope, steady.state, host.tools.get("stay"))
    agent = await ask_to_call(host, "stay", "bystander")
    agents_before = host.services.agents.list()

    plugins.write("edited", tools_source({"first": "2"}))
    assert host.reload("edited").ok

    assert (steady.obj, steady.scope, steady.state, host.tools.get("stay")) == before
    assert host.services.agents.list() == agents_before
    assert agent.status == "idle"
    await ask_to_call(host, "first", "bystander", agent)
    assert last_result(agent) == ("2", False)
    await ask_to_call(host, "stay", "bystander", agent)
    assert last_result(agent) == ("steady", False)
