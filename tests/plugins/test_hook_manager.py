"""The host's pluggy manager: a cheap path for module plugins that finds what pluggy finds."""

from __future__ import annotations

import types
from typing import Any

import pluggy
import pytest

from host import hookimpl
from host.app import Host
from host.plugins import hookspecs
from host.plugins.discovery import from_object
from host.plugins.hookmanager import HookManager
from host.settings import HostSettings


@hookimpl
def activate(ctx):
    pass


@hookimpl(specname="register_tools")
def tools_under_another_name(register):
    pass


def plain(register):
    pass


class Holder:
    @hookimpl
    def register_services(self, register):
        pass


def sample_module() -> types.ModuleType:
    """A module holding every kind of attribute pluggy has a rule for."""
    module = types.ModuleType("sample_plugin", "A plugin module.")
    not_a_dict = lambda register: None  # noqa: E731
    not_a_dict.agent_host_impl = True  # type: ignore[attr-defined]
    module.__dict__.update(
        activate=activate,
        tools_under_another_name=tools_under_another_name,
        plain=plain,
        register_models=staticmethod(hookimpl(lambda register: None)),
        register_profiles=classmethod(hookimpl(lambda cls, register: None)),
        register_services=Holder().register_services,
        not_a_dict=not_a_dict,
        hookimpl=hookimpl,
        Holder=Holder,
        requires=("x",),
        __annotations__={"requires": "tuple[str, ...]"},
    )
    return module


def test_module_attributes_parse_as_pluggy_parses_them():
    module = sample_module()
    ours = HookManager(hookspecs.PROJECT)
    stock = pluggy.PluginManager(hookspecs.PROJECT)
    names = dir(module)
    found = {name: ours.parse_hookimpl_opts(module, name) for name in names}
    assert found == {name: stock.parse_hookimpl_opts(module, name) for name in names}
    assert {name for name, opts in found.items() if opts is not None} == {
        "activate",
        "register_models",
        "register_profiles",
        "register_services",
        "tools_under_another_name",
    }


@pytest.mark.parametrize("plugin", [sample_module(), Holder, Holder()])
def test_registration_finds_the_same_implementations(plugin):
    ours, stock = HookManager(hookspecs.PROJECT), pluggy.PluginManager(hookspecs.PROJECT)
    for manager in (ours, stock):
        manager.add_hookspecs(hookspecs)
        manager.register(plugin, name="sample")
    for hook in hookspecs.ACTIVATION_ORDER:
        expected = [i.function for i in getattr(stock.hook, hook).get_hookimpls()]
        assert [i.function for i in ours.implementations(plugin).get(hook, ())] == expected


def test_unknown_hook_in_a_module_fails_the_plugin(tmp_path):
    typo = types.ModuleType("typo_plugin")
    typo.register_tool = hookimpl(lambda register: None)  # type: ignore[attr-defined]
    host = Host(HostSettings(data_dir=tmp_path))
    host.add_plugins([from_object("typo", typo)])
    host.start()
    row = next(r for r in host.plugin_rows() if r["name"] == "typo")
    assert (row["state"], row["error"]) == (
        "failed",
        'AttributeError: unknown hook "register_tool" (did you mean "register_tools"?)',
    )
    assert host.plugins.pm.get_plugin("typo") is None


def test_close_takes_every_plugin_out_of_pluggy_and_a_restart_works(tmp_path):
    calls = []
    plugins = []
    for index in range(5):
        module = types.ModuleType(f"counted_{index}")
        module.activate = hookimpl(lambda scope, i=index: calls.append(i))  # type: ignore[attr-defined]
        plugins.append(from_object(f"counted_{index}", module))
    host = Host(HostSettings(data_dir=tmp_path))
    host.add_plugins(plugins)
    host.start()
    assert calls == [0, 1, 2, 3, 4]
    host.close()
    assert host.plugins.pm.get_plugins() == set()
    assert all(
        not getattr(host.plugins.pm.hook, h).get_hookimpls() for h in hookspecs.ACTIVATION_ORDER
    )
    host.plugins.reconcile()
    assert calls == [0, 1, 2, 3, 4] * 2
    assert {r["state"] for r in host.plugin_rows() if r["name"].startswith("counted_")} == {
        "active"
    }


def ordered_plugin(index: int, **options: Any) -> types.ModuleType:
    """A module implementing ``activate`` with the given pluggy ordering options."""
    module = types.ModuleType(f"ordered_{index}")
    wrapper = options.get("wrapper") or options.get("hookwrapper")

    def activate(ctx):
        if wrapper:
            yield

    module.activate = hookimpl(**options)(activate)  # type: ignore[attr-defined]
    return module


ORDERINGS = [
    {},
    {"tryfirst": True},
    {"trylast": True},
    {"wrapper": True},
    {"hookwrapper": True},
    {"wrapper": True, "tryfirst": True},
    {"wrapper": True, "trylast": True},
]


SEQUENCES = [(ORDERINGS[i:] + ORDERINGS[:i]) * 2 + [{}] for i in range(len(ORDERINGS))] + [
    [{}, {"tryfirst": True}, {}, {"trylast": True}, {}, {}],
]


@pytest.mark.parametrize("sequence", SEQUENCES)
def test_implementations_are_ordered_as_pluggy_orders_them(sequence):
    plugins = [ordered_plugin(i, **options) for i, options in enumerate(sequence)]
    ours, stock = HookManager(hookspecs.PROJECT), pluggy.PluginManager(hookspecs.PROJECT)
    for manager in (ours, stock):
        manager.add_hookspecs(hookspecs)
        for plugin in plugins:
            manager.register(plugin, name=plugin.__name__)
    assert [i.plugin for i in ours.hook.activate.get_hookimpls()] == [
        i.plugin for i in stock.hook.activate.get_hookimpls()
    ]
    for plugin in plugins:
        assert list(ours.implementations(plugin)["activate"]) == [
            i for i in ours.hook.activate.get_hookimpls() if i.plugin is plugin
        ]


def test_close_keeps_what_was_registered_in_pluggy_by_other_means(tmp_path):
    module = types.ModuleType("counted")
    module.activate = hookimpl(lambda scope: None)  # type: ignore[attr-defined]
    outsider = types.ModuleType("outsider")
    outsider.activate = hookimpl(lambda ctx: None)  # type: ignore[attr-defined]
    host = Host(HostSettings(data_dir=tmp_path))
    host.add_plugins([from_object("counted", module)])
    host.start()
    host.plugins.pm.register(outsider, name="outsider")
    host.close()
    assert host.plugins.pm.get_plugins() == {outsider}
    assert [i.plugin for i in host.plugins.pm.hook.activate.get_hookimpls()] == [outsider]
