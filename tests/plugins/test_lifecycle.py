"""Plugin lifecycle against throwaway distributions installed as real metadata."""

from __future__ import annotations

from pathlib import Path

import pytest

from host.app import Host
from host.naming import Owner
from host.plugins.discovery import discover, from_object
from host.plugins.selection import Selection
from host.settings import HostSettings
from tests.support import plugin_row, without_origin

TOOL_MODULE = """
import attrs
from host import hookimpl
from host.tools import tool

requires = {requires!r}

@attrs.frozen
class Args:
    text: str

@tool({tool_name!r}, "Echo the text.", Args)
async def echo(args, exec):
    return args.text

@hookimpl
def register_tools(register):
    register(echo)
"""


def tool_module(tool_name: str, requires: tuple[str, ...] = ()) -> str:
    return TOOL_MODULE.format(tool_name=tool_name, requires=requires)


def make_host(tmp_path: Path, names: set[str], **kwargs: object) -> Host:
    host = Host(HostSettings(data_dir=tmp_path / "data"), **kwargs)  # type: ignore[arg-type]
    host.add_plugins(c for c in discover() if c.name in names)
    return host.start()


def test_discovery_keeps_distribution_and_version(site, unique, tmp_path):
    module = unique("echo")
    site(
        "echo-dist",
        version="2.5.1",
        entry_points={"echo": module},
        modules={module: tool_module("echo")},
    )
    host = make_host(tmp_path, {"echo"})
    assert plugin_row(host, "echo") == {
        "name": "echo",
        "distribution": "echo-dist",
        "version": "2.5.1",
        "entry_point": module,
        "builtin": False,
        "parent": None,
        "state": "active",
        "requires": [],
        "uses": [],
        "missing": [],
        "error": None,
        "tools": ["echo"],
        "services": [],
    }
    assert [r["name"] for r in host.tool_rows()] == ["echo"]


def test_requires_gates_activation_both_ways(site, unique, tmp_path):
    module = unique("gated")
    site(entry_points={"gated": module}, modules={module: tool_module("gated_echo", ("weather",))})
    host = make_host(tmp_path, {"gated"})
    assert plugin_row(host, "gated")["state"] == "inactive"
    assert plugin_row(host, "gated")["missing"] == ["weather"]
    assert "gated_echo" not in host.tools

    withdraw = host.services.register("weather", object(), owner="test")
    assert plugin_row(host, "gated")["state"] == "active"
    assert "gated_echo" in host.tools

    withdraw()
    assert plugin_row(host, "gated")["state"] == "inactive"
    assert "gated_echo" not in host.tools

    host.services.register("weather", object(), owner="test")
    assert plugin_row(host, "gated")["state"] == "active"
    assert plugin_row(host, "gated")["tools"] == ["gated_echo"]


def test_provider_and_dependent_chain_follow_each_other(tmp_path):
    from host import hookimpl

    class Provider:
        @staticmethod
        @hookimpl
        def register_services(register):
            register("weather", "sunny")

    class Dependent:
        requires = ("weather",)
        seen: list[str] = []

        @staticmethod
        @hookimpl
        def activate(ctx, scope):
            Dependent.seen.append(ctx.weather)
            scope.add(lambda: Dependent.seen.append("disposed"))

    host = Host(HostSettings(data_dir=tmp_path))
    # The dependent is added first: order of addition must not matter.
    host.add_plugins([from_object("dependent", Dependent), from_object("provider", Provider)])
    host.start()
    assert plugin_row(host, "dependent")["state"] == "active"
    assert Dependent.seen == ["sunny"]

    host.plugins.block("provider")
    assert plugin_row(host, "provider")["state"] == "blocked"
    assert plugin_row(host, "dependent")["state"] == "inactive"
    assert plugin_row(host, "dependent")["missing"] == ["weather"]
    assert Dependent.seen == ["sunny", "disposed"]

    host.plugins.unblock("provider")
    assert plugin_row(host, "dependent")["state"] == "active"
    assert Dependent.seen == ["sunny", "disposed", "sunny"]


def test_import_error_marks_only_that_plugin_failed(site, unique, tmp_path):
    broken, good = unique("broken"), unique("good")
    site(
        entry_points={"broken": broken, "good": good},
        modules={broken: "raise RuntimeError('boom at import')\n", good: tool_module("good")},
    )
    host = make_host(tmp_path, {"broken", "good"})
    assert plugin_row(host, "broken")["state"] == "failed"
    assert without_origin(plugin_row(host, "broken")["error"]) == "RuntimeError: boom at import"
    assert plugin_row(host, "good")["state"] == "active"


def test_activation_failing_half_way_leaves_nothing_registered(site, unique, tmp_path):
    module = unique("halfway")
    source = (
        tool_module("first_tool")
        + """
@hookimpl
def register_services(register):
    register("half_service", object())

@hookimpl
def activate(ctx, scope):
    raise ValueError("activation broke")
"""
    )
    site(entry_points={"halfway": module}, modules={module: source})
    host = make_host(tmp_path, {"halfway"})
    assert plugin_row(host, "halfway")["state"] == "failed"
    assert without_origin(plugin_row(host, "halfway")["error"]) == "ValueError: activation broke"
    assert plugin_row(host, "halfway")["tools"] == []
    assert "first_tool" not in host.tools
    assert not host.services.has("half_service")
    assert host.plugins.pm.get_plugin("halfway") is None


def test_duplicate_tool_names_fail_the_second_plugin_naming_both(site, unique, tmp_path):
    a, b = unique("dup_a"), unique("dup_b")
    site(
        entry_points={"a_plugin": a, "b_plugin": b},
        modules={a: tool_module("same"), b: tool_module("same")},
    )
    host = make_host(tmp_path, {"a_plugin", "b_plugin"})
    assert plugin_row(host, "a_plugin")["state"] == "active"
    assert plugin_row(host, "b_plugin")["state"] == "failed"
    assert plugin_row(host, "b_plugin")["error"] == (
        'DuplicateNameError: tool "same" from plugin "b_plugin" duplicates the one from plugin "a_plugin"'
    )
    assert host.tools.owner("same") == Owner("a_plugin")


def test_unknown_hook_fails_the_plugin(tmp_path):
    from host import hookimpl

    class Typo:
        @staticmethod
        @hookimpl
        def register_tool(register):  # misspelt: register_tools
            raise AssertionError("never called")

    host = Host(HostSettings(data_dir=tmp_path))
    host.add_plugins([from_object("typo", Typo)])
    host.start()
    assert plugin_row(host, "typo")["state"] == "failed"
    assert plugin_row(host, "typo")["error"] == (
        'AttributeError: unknown hook "register_tool" (did you mean "register_tools"?)'
    )


@pytest.mark.parametrize(
    ("environ", "no_plugin", "states"),
    [
        ({}, (), {"one": "active", "two": "active"}),
        ({"AGENT_HOST_PLUGINS": "one"}, (), {"one": "active", "two": "blocked"}),
        ({"AGENT_HOST_PLUGINS": ""}, (), {"one": "blocked", "two": "blocked"}),
        ({"AGENT_HOST_DISABLE_PLUGINS": "two"}, (), {"one": "active", "two": "blocked"}),
        ({}, ("one",), {"one": "blocked", "two": "active"}),
    ],
)
def test_allow_and_block_lists(site, unique, tmp_path, environ, no_plugin, states):
    one, two = unique("one"), unique("two")
    site(
        entry_points={"one": one, "two": two},
        modules={one: tool_module("t1"), two: tool_module("t2")},
    )
    host = make_host(tmp_path, {"one", "two"}, selection=Selection.from_env(environ, no_plugin))
    assert {name: plugin_row(host, name)["state"] for name in states} == states


def test_blocked_plugin_is_never_imported(site, unique, tmp_path):
    module = unique("never")
    site(entry_points={"never": module}, modules={module: "raise RuntimeError('imported')\n"})
    host = make_host(tmp_path, {"never"}, selection=Selection(block=frozenset({"never"})))
    assert plugin_row(host, "never")["state"] == "blocked"
    assert plugin_row(host, "never")["error"] == "blocked by selection"


def test_unknown_selected_names_warn(tmp_path):
    selection = Selection.from_env({"AGENT_HOST_PLUGINS": "ghost"}, ["phantom"])
    host = Host(HostSettings(data_dir=tmp_path), selection=selection).start()
    assert host.warnings == [
        'unknown plugin "ghost" in AGENT_HOST_PLUGINS',
        'unknown plugin "phantom" blocked',
    ]


def test_disposal_failures_are_aggregated_and_everything_is_attempted(tmp_path):
    from host import hookimpl

    calls: list[str] = []

    class Messy:
        @staticmethod
        @hookimpl
        def activate(scope):
            def fail(label: str) -> None:
                calls.append(label)
                raise RuntimeError(label)

            scope.add(lambda: fail("first"))
            scope.add(lambda: calls.append("middle"))
            scope.add(lambda: fail("last"))

    host = Host(HostSettings(data_dir=tmp_path))
    host.add_plugins([from_object("messy", Messy)])
    host.start()
    (failure,) = host.close()  # returned, not raised
    assert calls == ["last", "middle", "first"]
    assert plugin_row(host, "messy")["state"] == "failed"
    assert "RuntimeError: last; RuntimeError: first" in str(plugin_row(host, "messy")["error"])
    assert failure.line() == (
        'plugin "messy": disposal failed: RuntimeError: last; RuntimeError: first'
    )
    assert host.disposal_failures == [failure]
    assert host.close() == [] and host.disposal_failures == [failure]


def test_a_builtin_provider_steps_aside_and_returns(tmp_path):
    """A built-in's service is a default: another plugin providing the same name replaces it
    (plugins that use or require it restart on the new one) and blocking that plugin brings
    the built-in back."""
    from host import hookimpl

    class Builtin:
        @staticmethod
        @hookimpl
        def register_services(register):
            register("weather", "builtin sun")

    class Replacement:
        @staticmethod
        @hookimpl
        def register_services(register):
            register("weather", "installed rain")

    class User:
        uses = ("weather",)
        seen: list[object] = []

        @staticmethod
        @hookimpl
        def activate(ctx, scope):
            User.seen.append(ctx.find("weather"))

    host = Host(HostSettings(data_dir=tmp_path / "data"))
    host.add_plugins([from_object("builtin", Builtin, builtin=True), from_object("user", User)])
    host.add_plugins([from_object("replacement", Replacement)])
    host.start()
    assert host.services.get("weather") == "installed rain"
    assert User.seen[-1] == "installed rain"
    assert (
        plugin_row(host, "builtin")["state"] == "active"
        and plugin_row(host, "builtin")["services"] == []
    )
    assert plugin_row(host, "replacement")["services"] == ["weather"]
    assert plugin_row(host, "user")["uses"] == ["weather"]

    host.plugins.block("replacement")
    assert host.services.get("weather") == "builtin sun"
    assert User.seen[-1] == "builtin sun"
    assert plugin_row(host, "builtin")["services"] == ["weather"]

    host.plugins.unblock("replacement")
    assert host.services.get("weather") == "installed rain"
    assert User.seen[-1] == "installed rain"
    host.close()
    assert "weather" not in host.services.names()


def test_two_installed_providers_of_one_name_still_conflict(tmp_path):
    from host import hookimpl

    class First:
        @staticmethod
        @hookimpl
        def register_services(register):
            register("weather", 1)

    class Second:
        @staticmethod
        @hookimpl
        def register_services(register):
            register("weather", 2)

    host = Host(HostSettings(data_dir=tmp_path / "data"))
    host.add_plugins([from_object("first", First), from_object("second", Second)])
    host.start()
    assert host.services.get("weather") == 1
    assert plugin_row(host, "second")["state"] == "failed"
    assert "weather" in str(plugin_row(host, "second")["error"])


def test_uses_must_name_services(tmp_path):
    class Bad:
        uses = "weather"

    host = Host(HostSettings(data_dir=tmp_path / "data"))
    host.add_plugins([from_object("bad", Bad)])
    host.start()
    assert plugin_row(host, "bad")["state"] == "failed"
    assert "uses must be a tuple of service names" in str(plugin_row(host, "bad")["error"])
