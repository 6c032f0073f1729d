"""Sub-plugins (``register_plugins``): rows, selection, isolation, config, reload, removal."""

from __future__ import annotations

from typing import Any

import attrs

from host import hookimpl
from tests.support import named_tool, plugin_rows, without_origin


class Part:
    """A sub-plugin registering one tool; records its disposal."""

    @attrs.frozen
    class Config:
        greeting: str = "hello"

    def __init__(self, name: str, log: list[str]) -> None:
        self.name, self.log = name, log

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(named_tool(f"{self.name}_tool"))

    @hookimpl
    def activate(self, scope: Any, config: Any) -> None:
        self.log.append(f"{self.name} up ({config.greeting})")
        scope.add(lambda: self.log.append(f"{self.name} down"))


class Parent:
    """Registers a sub-plugin per name in ``names``; a name in ``broken`` fails to load."""

    def __init__(self, names: tuple[str, ...], broken: tuple[str, ...] = ()) -> None:
        self.names, self.broken = names, broken
        self.log: list[str] = []
        self.loads: dict[str, int] = {}

    def _loader(self, name: str) -> Any:
        def load() -> Part:
            self.loads[name] = self.loads.get(name, 0) + 1
            if name in self.broken:
                raise RuntimeError(f"{name} cannot start")
            return Part(name, self.log)

        return load

    @hookimpl
    def register_plugins(self, register: Any) -> None:
        for name in self.names:
            register(name, self._loader(name))


def test_each_sub_plugin_is_a_plugin_of_its_own(make_host):
    parent = Parent(("a", "b"))
    host = make_host(("servers", parent))
    found = plugin_rows(host)
    assert {name: found[name]["state"] for name in ("servers", "servers.a", "servers.b")} == {
        "servers": "active",
        "servers.a": "active",
        "servers.b": "active",
    }
    assert found["servers.a"]["parent"] == "servers" and found["servers"]["parent"] is None
    assert found["servers.a"]["tools"] == ["a_tool"]
    assert {"a_tool", "b_tool"} <= {row["name"] for row in host.tool_rows()}
    assert parent.log == ["a up (hello)", "b up (hello)"]
    assert host.warnings == []


def test_one_sub_plugin_can_be_blocked_by_name(make_host):
    from host.plugins.selection import Selection

    host = make_host(("servers", Parent(("a", "b"))))
    host.plugins.block("servers.b")
    assert plugin_rows(host)["servers.b"]["state"] == "blocked"
    assert "b_tool" not in {row["name"] for row in host.tool_rows()}
    assert Selection(block=frozenset({"servers.b"})).unknown_names(plugin_rows(host)) == []


def test_a_sub_plugin_that_fails_to_load_fails_alone(make_host):
    host = make_host(("servers", Parent(("a", "b"), broken=("a",))))
    found = plugin_rows(host)
    assert (found["servers.a"]["state"], found["servers.a"]["error"]) == (
        "failed",
        "RuntimeError: a cannot start",
    )
    assert found["servers.b"]["state"] == found["servers"]["state"] == "active"


def test_a_bad_sub_plugin_name_fails_the_parent_and_leaves_nothing(make_host):
    host = make_host(("servers", Parent(("ok", "no spaces"))))
    found = plugin_rows(host)
    assert found["servers"]["state"] == "failed"
    assert without_origin(found["servers"]["error"]) == (
        "ValueError: sub-plugin name 'no spaces' is not 1-32 of [A-Za-z0-9_-]"
    )
    assert "servers.ok" not in found  # registered, then taken back with the parent


def test_sub_plugins_go_away_with_their_parent(make_host):
    parent = Parent(("a",))
    host = make_host(("servers", parent))
    host.plugins.block("servers")
    assert "servers.a" not in plugin_rows(host)
    assert "a_tool" not in {row["name"] for row in host.tool_rows()}
    assert parent.log == ["a up (hello)", "a down"]
    host.plugins.unblock("servers")
    assert plugin_rows(host)["servers.a"]["state"] == "active"


def test_a_config_table_reaches_the_sub_plugin(make_host):
    parent = Parent(("a",))
    make_host(("servers", parent), config={"plugins": {"servers.a": {"greeting": "hi"}}})
    assert parent.log == ["a up (hi)"]


def test_reloading_a_sub_plugin_loads_it_again(make_host):
    parent = Parent(("a", "b"))
    host = make_host(("servers", parent))
    outcome = host.reload("servers.a")
    assert outcome.ok, outcome.error
    assert parent.loads == {"a": 2, "b": 1}
    # the new version activates while the old one still serves, then the old one goes
    assert parent.log == ["a up (hello)", "b up (hello)", "a up (hello)", "a down"]
    assert plugin_rows(host)["servers.a"]["state"] == "active"


def test_closing_the_host_disposes_sub_plugins_first(make_host):
    parent = Parent(("a",))
    host = make_host(("servers", parent))
    host.close()
    assert parent.log == ["a up (hello)", "a down"]


class Gated:
    """Registers one sub-plugin held back with a reason until the user lets it load."""

    @hookimpl
    def register_plugins(self, register: Any) -> None:
        register("held", lambda: Part("held", []), blocked="not trusted: ask first")


def test_a_sub_plugin_can_be_registered_blocked_with_a_reason(make_host):
    host = make_host(("servers", Gated()))
    assert (
        plugin_rows(host)["servers.held"]["state"],
        plugin_rows(host)["servers.held"]["error"],
    ) == (
        "blocked",
        "not trusted: ask first",
    )
    host.plugins.unblock("servers.held")
    assert plugin_rows(host)["servers.held"]["state"] == "active"


class SelfAware:
    """Keeps its handle and the disposer of its tool, to fail itself or take the tool back."""

    def __init__(self) -> None:
        self.handle: Any = None
        self.take_back: Any = None

    @hookimpl
    def register_tools(self, register: Any) -> None:
        self.take_back = register(named_tool("solo_tool"))

    @hookimpl
    def activate(self, plugin: Any) -> None:
        self.handle = plugin


def test_a_plugin_can_fail_itself_and_take_a_tool_back(make_host):
    aware = SelfAware()
    host = make_host(("aware", aware))
    assert aware.handle.name == "aware"
    aware.take_back()
    assert plugin_rows(host)["aware"]["tools"] == []
    assert "solo_tool" not in {row["name"] for row in host.tool_rows()}
    aware.handle.fail('process "x" exited (status 3): boom')
    assert (plugin_rows(host)["aware"]["state"], plugin_rows(host)["aware"]["error"]) == (
        "failed",
        'process "x" exited (status 3): boom',
    )
    assert host.reload("aware").ok  # a reload brings it back
    assert plugin_rows(host)["aware"]["state"] == "active"
