"""Atomic reload: the new version activates beside the running one and swaps in at once; a
failure leaves the running activation untouched; state can be handed from old to new."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from host import hookimpl
from host.app import Host
from tests.reload.support import Plugins, plugin_tools, text_of, tools_source
from tests.support import without_origin

FAILED = "reload of keeper failed, previous version kept: "

BOX = """
made = []
disposed = []
seen = []
closed = []

class Connection:
    def __init__(self):
        self.versions = []
"""


@pytest.fixture
def box(plugins: Plugins, unique: Callable[[str], str]) -> Iterator[Any]:
    """A module both versions of a plugin import: what they made, saw and disposed."""
    name = unique("box")
    (plugins.directory / f"{name}.py").write_text(BOX)
    try:
        module: Any = __import__(name)
        yield module
    finally:
        sys.modules.pop(name, None)


KEEPER = """
import {box}

@hookimpl
def register_prompt_sections(ctx):  # called before register_tools
    {box}.seen.append(ctx.tools.get("hello"))

@hookimpl
def activate(ctx, scope):
    thing = object()
    {box}.made.append(thing)
    scope.add(lambda: {box}.disposed.append(thing))
    {fail}
"""


def keeper(box: Any, text: str, fail: str = "") -> str:
    """A plugin with tool ``hello`` (answering ``text``) whose activation makes an object."""
    return tools_source({"hello": text}) + KEEPER.format(box=box.__name__, fail=fail)


async def test_a_failed_activation_leaves_the_old_activation_untouched(
    plugins: Plugins, dev_host: Callable[..., Host], box: Any
) -> None:
    plugins.install("keeper", keeper(box, "old"))
    host = dev_host({"keeper"})
    record = host.plugins.records["keeper"]
    before = (record.obj, record.scope, record.handle)
    (thing,) = box.made

    plugins.write("keeper", keeper(box, "new", fail="raise RuntimeError('no')"))
    outcome = host.reload("keeper")
    assert without_origin(outcome.line()) == FAILED + "RuntimeError: no"
    assert (record.obj, record.scope, record.handle) == before
    assert box.made[0] is thing and len(box.made) == 2  # the new version's object …
    assert box.disposed == [box.made[1]]  # … was undone; the old one never disposed
    assert record.state == "active"
    assert await text_of(host, "hello") == "old"


async def test_tools_swap_in_one_step(
    plugins: Plugins, dev_host: Callable[..., Host], box: Any
) -> None:
    """While the new version activates, the old tool still serves (before, it was gone while
    the new version's hooks ran); then the new one does."""
    plugins.install("keeper", keeper(box, "old"))
    host = dev_host({"keeper"})
    old_tool = host.tools.get("hello")
    assert box.seen == [None]  # the first activation: nothing yet

    plugins.write("keeper", keeper(box, "new"))
    assert host.reload("keeper").ok
    assert box.seen[1] is old_tool  # seen from inside the new version's activation
    new_tool = host.tools.get("hello")
    assert new_tool is not old_tool and plugin_tools(host, "keeper") == ["hello"]
    assert await text_of(host, "hello") == "new"
    assert box.disposed == [box.made[0]]  # the old activation went after the swap


PROVIDER = """
from host import hookimpl

@hookimpl
def register_services(register):
    register("weather", {value!r})

@hookimpl
def activate(ctx, scope):
    assert ctx.weather == {value!r}  # its own new service, while the old one still serves
    {fail}
"""


async def test_a_failed_reload_of_a_provider_leaves_its_dependents_alone(
    plugins: Plugins, dev_host: Callable[..., Host]
) -> None:
    plugins.install("weather", PROVIDER.format(value="rain", fail=""))
    seen: list[str] = []

    class Dependent:
        requires = ("weather",)

        @staticmethod
        @hookimpl
        def activate(ctx: Any, scope: Any) -> None:
            seen.append(ctx.weather)
            scope.add(lambda: seen.append("down"))

    host = dev_host({"weather"}, ("dependent", Dependent))
    plugins.write("weather", PROVIDER.format(value="sun", fail="raise RuntimeError('no')"))
    assert not host.reload("weather").ok
    assert seen == ["rain"]  # never restarted
    assert host.services.get("weather") == "rain"

    plugins.write("weather", PROVIDER.format(value="sun", fail=""))
    assert host.reload("weather").ok
    assert seen == ["rain", "down", "sun"]
    assert host.plugins.records["dependent"].state == "active"


STATEFUL = """
import {box}

@hookimpl
def hand_over_state(ctx, config):
    {hand_over}
    return _state[0]

@hookimpl
def take_over_state(state, ctx):
    {take_over}
    _state[0] = state

@hookimpl
def activate(scope, plugin):
    if _state[0] is None:
        _state[0] = {box}.Connection()
    connection = _state[0]
    connection.versions.append({text!r})
    scope.add(lambda: plugin.handed_over or {box}.closed.append(connection))
    {fail}

_state = [None]
"""


def stateful(box: Any, text: str, **hooks: str) -> str:
    """A plugin whose connection (made by its first version) passes from version to version."""
    bodies = {"hand_over": "pass", "take_over": "pass", "fail": ""} | hooks
    return tools_source({"hello": text}) + STATEFUL.format(box=box.__name__, text=text, **bodies)


async def test_state_is_handed_from_the_old_version_to_the_new(
    plugins: Plugins, dev_host: Callable[..., Host], box: Any
) -> None:
    plugins.install("keeper", stateful(box, "v1"))
    host = dev_host({"keeper"})

    plugins.write("keeper", stateful(box, "v2"))
    assert host.reload("keeper").ok
    plugins.write("keeper", stateful(box, "v3"))
    assert host.reload("keeper").ok
    assert await text_of(host, "hello") == "v3"
    assert box.closed == []  # each old version handed the connection over: none closed it

    # a new version that fails gives the connection back: the running one keeps it
    plugins.write("keeper", stateful(box, "v4", fail="raise RuntimeError('no')"))
    assert without_origin(host.reload("keeper").line()) == FAILED + "RuntimeError: no"
    assert box.closed == []
    assert await text_of(host, "hello") == "v3"

    # at the end, the version holding it closes it, once: the same object all along
    host.plugins.close()
    (connection,) = box.closed
    assert connection.versions == ["v1", "v2", "v3", "v4"]


@pytest.mark.parametrize(
    ("side", "edit"),
    [("old", "hand_over"), ("new", "take_over")],
)
async def test_a_failing_hand_over_hook_keeps_the_old_version(
    side: str, edit: str, plugins: Plugins, dev_host: Callable[..., Host], box: Any
) -> None:
    raising = {edit: "raise RuntimeError('cannot hand over')"}
    plugins.install("keeper", stateful(box, "v1", **(raising if side == "old" else {})))
    host = dev_host({"keeper"})
    record = host.plugins.records["keeper"]
    before = (record.obj, record.scope)

    plugins.write("keeper", stateful(box, "v2", **(raising if side == "new" else {})))
    assert without_origin(host.reload("keeper").line()) == FAILED + "RuntimeError: cannot hand over"
    assert (record.obj, record.scope) == before and record.state == "active"
    assert box.closed == []
    assert await text_of(host, "hello") == "v1"


async def test_a_built_in_service_provider_reloads_with_its_dependents(
    dev_host: Callable[..., Host],
) -> None:
    host = dev_host(set())
    before = host.services.get("sessions")
    assert host.plugins.records["agents"].requires == ("sessions", "models")

    outcome = host.reload("sessions")
    assert outcome.ok and outcome.state == "active"
    after = host.services.get("sessions")
    assert after is not before and host.services.provider("sessions") == "sessions"
    assert host.plugins.records["agents"].state == "active"  # taken down and back up
    agent = await host.services.agents.create(label="after")
    assert host.services.sessions.get(agent.id) is agent.session


async def test_a_name_another_plugin_holds_fails_the_reload_before_anything_changes(
    plugins: Plugins, dev_host: Callable[..., Host], box: Any
) -> None:
    plugins.install("keeper", keeper(box, "old"))
    plugins.install("steady", tools_source({"stay": "steady"}))
    host = dev_host({"keeper", "steady"})

    plugins.write("keeper", tools_source({"hello": "new", "stay": "mine"}))
    assert host.reload("keeper").line() == FAILED + (
        'DuplicateNameError: tool "stay" from plugin "keeper" duplicates the one from '
        'plugin "steady"'
    )
    assert box.disposed == [] and await text_of(host, "hello") == "old"
    assert await text_of(host, "stay") == "steady"


def test_after_a_swap_the_new_disposer_works_and_the_old_handle_is_inert(
    dev_host: Callable[..., Host],
) -> None:
    from tests.plugins.test_sub_plugins import SelfAware

    aware = SelfAware()  # the same object at each reload: its hooks run again
    host = dev_host(set(), ("aware", aware))
    old_handle, old_take_back = aware.handle, aware.take_back
    assert host.reload("aware").ok
    assert aware.handle is not old_handle and aware.take_back is not old_take_back

    old_handle.fail("a late call from the old version")  # its activation is over: ignored
    assert host.plugins.records["aware"].state == "active"
    old_take_back()  # the old registration is gone already
    assert host.plugins.records["aware"].tools == ["solo_tool"]
    aware.take_back()  # the new version takes its tool back
    assert host.plugins.records["aware"].tools == [] and host.tools.get("solo_tool") is None
    aware.handle.fail("the new one can fail itself")
    assert host.plugins.records["aware"].state == "failed"


def test_a_parent_reload_replaces_its_sub_plugins_after_the_swap(
    dev_host: Callable[..., Host],
) -> None:
    from tests.plugins.test_sub_plugins import Parent

    parent = Parent(("a", "b"))
    host = dev_host(set(), ("servers", parent))
    assert host.reload("servers").ok
    assert parent.loads == {"a": 2, "b": 2}
    # the old sub-plugins go with the old parent (dependents first), then the new ones start
    first, then = ["a up (hello)", "b up (hello)"], ["b down", "a down"]
    assert parent.log == [*first, *then, *first]
    states = {n: r.state for n, r in host.plugins.records.items() if n.startswith("servers")}
    assert states == {"servers": "active", "servers.a": "active", "servers.b": "active"}
    assert {"a_tool", "b_tool"} <= set(host.tools)


async def test_a_failed_new_version_whose_undoing_raises_reports_both(
    plugins: Plugins, dev_host: Callable[..., Host], box: Any
) -> None:
    plugins.install("keeper", keeper(box, "old"))
    host = dev_host({"keeper"})
    failing = "scope.add(lambda: 1 / 0)\n    raise RuntimeError('no')"
    plugins.write("keeper", keeper(box, "new", fail=failing))
    assert host.reload("keeper").line() == (
        FAILED + "RuntimeError: no; ZeroDivisionError: division by zero"
    )
    assert await text_of(host, "hello") == "old"


MODELER = """
from host import hookimpl
from host.agents.scripted import ScriptedModel

@hookimpl
def register_models(register):
    for name in {names!r}:
        register(name, ScriptedModel)
"""


async def test_models_swap_and_one_another_plugin_holds_keeps_the_old_version(
    plugins: Plugins, dev_host: Callable[..., Host]
) -> None:
    plugins.install("modeler", MODELER.format(names=("mine",)))
    plugins.install("rival", MODELER.format(names=("theirs",)))
    host = dev_host({"modeler", "rival"})
    models = host.services.models

    plugins.write("modeler", MODELER.format(names=("mine", "more")))
    assert host.reload("modeler").ok
    assert {"mine", "more", "theirs"} <= set(models.names())

    plugins.write("modeler", MODELER.format(names=("mine", "theirs")))
    assert host.reload("modeler").line() == (
        'reload of modeler failed, previous version kept: DuplicateNameError: model "theirs" '
        'from plugin "modeler" duplicates the one from another plugin'
    )
    assert host.plugins.records["modeler"].models == ["mine", "more"]
    assert host.plugins.records["modeler"].state == "active"
