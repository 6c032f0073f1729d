"""A plugin that provides a service and hands its state over reloads in place under
``agent-host dev``: dependents re-activate against the new service in the same swap, with no
restart. A restart remains when the set of provided services changes, when the new version
takes over no state, and for providers that hand nothing over."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from host.app import Host
from host.plugins.watch import ReloadLoop, WatchMap
from tests.reload.support import Plugins, ask_to_call, last_result, tools_source

PROVIDER = """
from host import hookimpl

STATE = {{}}

@hookimpl
def hand_over_state():
    return STATE.get("notes")

@hookimpl
def take_over_state(state):
    STATE["notes"] = state
{take_over}
@hookimpl
def register_services(register):
    notes = STATE.setdefault("notes", [])
    notes.append({version!r})
{services}
"""

ONE_SERVICE = '    register("notes", notes)\n'
TWO_SERVICES = ONE_SERVICE + '    register("tags", [])\n'

READER = """
@tool("read_notes", "Read the notes service.", Args)
async def tool_read_notes(args, exec):
    return ",".join(exec.ctx.notes)

@hookimpl
def register_tools(register):
    register(tool_read_notes)
"""


PLAIN_PROVIDER = """
@hookimpl
def register_services(register):
    register("plain", 1)
"""


def provider(version: str, services: str = ONE_SERVICE, take_over: bool = True) -> str:
    skip = "" if take_over else "\ntake_over_state = None\n"
    return PROVIDER.format(version=version, services=services, take_over=skip)


async def one_round(host: Host, path: Path) -> tuple[str | None, list[str]]:
    """What the dev loop does with one save of ``path``: its restart reason and lines."""
    lines: list[str] = []

    async def changes() -> AsyncIterator[list[Path]]:
        yield [path]

    reason = await ReloadLoop(WatchMap(host.plugins), lines.append).run(changes())
    await asyncio.sleep(0)
    return reason, lines


def set_up(plugins: Plugins, dev_host: Callable[..., Host]) -> Host:
    plugins.install("notes", provider("v1"))
    plugins.install("reader", tools_source({}, requires=("notes",)) + READER)
    return dev_host({"notes", "reader"})


async def test_a_provider_handing_its_state_over_reloads_in_place(
    plugins: Plugins, dev_host: Callable[..., Host]
) -> None:
    host = set_up(plugins, dev_host)
    agent = await ask_to_call(host, "read_notes", "reader")
    assert last_result(agent) == ("v1", False)

    plugins.write("notes", provider("v2"))
    reason, lines = await one_round(host, plugins.path("notes"))
    assert reason is None
    assert len(lines) == 1 and lines[0].startswith("reloaded notes in ")
    assert host.plugins.records["reader"].state == "active"
    await ask_to_call(host, "read_notes", "reader", agent)
    assert last_result(agent) == ("v1,v2", False)  # the same state, served by the new version


async def test_a_changed_set_of_services_restarts_and_changes_nothing(
    plugins: Plugins, dev_host: Callable[..., Host]
) -> None:
    host = set_up(plugins, dev_host)
    record = host.plugins.records["notes"]
    before = (record.obj, record.scope, host.services.get("notes"))
    plugins.write("notes", provider("v2", TWO_SERVICES))
    reason, lines = await one_round(host, plugins.path("notes"))
    assert reason == "notes now provides notes, tags (was notes)"
    assert lines == [f"restarting: {reason}"]
    assert (record.obj, record.scope, host.services.get("notes")) == before
    assert host.services.get("notes") == ["v1"]  # nothing was handed over to the new version
    assert not host.services.has("tags")
    assert [host.plugins.records[n].state for n in ("notes", "reader")] == ["active", "active"]


CHECKING_READER = READER + """
@hookimpl
def activate(ctx):
    if "bad" in ctx.notes:
        raise RuntimeError("a bad note")
"""


async def test_a_dependent_failing_against_the_new_service_is_in_the_outcome_line(
    plugins: Plugins, dev_host: Callable[..., Host]
) -> None:
    plugins.install("notes", provider("v1"))
    plugins.install("reader", tools_source({}, requires=("notes",)) + CHECKING_READER)
    host = dev_host({"notes", "reader"})
    plugins.write("notes", provider("bad"))
    reason, lines = await one_round(host, plugins.path("notes"))

    assert reason is None and len(lines) == 1
    assert re.fullmatch(
        r"reloaded notes in \d+ ms; reader failed to re-activate: "
        r"RuntimeError: a bad note \(reader_\w+\.py:\d+ in activate\)",
        lines[0],
    ), lines[0]
    assert host.plugins.records["reader"].state == "failed"


async def test_a_new_version_taking_over_no_state_restarts(
    plugins: Plugins, dev_host: Callable[..., Host]
) -> None:
    host = set_up(plugins, dev_host)
    plugins.write("notes", provider("v2", take_over=False))
    reason, _ = await one_round(host, plugins.path("notes"))
    assert reason == "notes provides services and takes over no state"


def test_a_provider_handing_nothing_over_still_restarts(
    plugins: Plugins, dev_host: Callable[..., Host]
) -> None:
    plugins.install("plain", tools_source({}) + PLAIN_PROVIDER)
    host = dev_host({"plain"})
    plan = WatchMap(host.plugins).plan([plugins.path("plain")])
    assert plan.restart == "plain provides services"
