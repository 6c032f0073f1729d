"""Each hook, called for real: what it registers appears, and goes away with the plugin."""

from __future__ import annotations

from typing import Any

from host import hookimpl
from host.app import Host
from host.plugins.discovery import from_object
from host.settings import HostSettings


def start(tmp_path, *plugins):
    host = Host(HostSettings(data_dir=tmp_path))
    host.add_plugins(from_object(name, obj) for name, obj in plugins)
    return host.start()


class ModelShelf:
    """A stand-in ``models`` service with the registry's register/disposer shape."""

    def __init__(self):
        self.models = {}

    def register(self, name, model):
        self.models[name] = model
        return lambda: self.models.pop(name)


def test_register_services_and_activate(tmp_path):
    events: list[tuple[Any, ...]] = []

    class Clock:
        @staticmethod
        @hookimpl
        def register_services(register, ctx, config):
            register("clock", "tick")

        @staticmethod
        @hookimpl
        def activate(ctx, scope, config):
            events.append(("activate", ctx.clock, config))
            scope.add(lambda: events.append(("disposed",)))

    host = start(tmp_path, ("clock", Clock))
    assert host.services.provider("clock") == "clock"
    assert events == [("activate", "tick", None)]
    host.plugins.block("clock")
    assert not host.services.has("clock")
    assert events[-1] == ("disposed",)


def test_register_models_requires_the_models_service(tmp_path):
    model = object()

    class Shelf:
        @staticmethod
        @hookimpl
        def register_services(register):
            register("models", ModelShelf())

    class Provider:
        @staticmethod
        @hookimpl
        def register_models(register, config):
            register("fake", model)

    host = start(tmp_path, ("provider", Provider))
    row = host.plugin_rows()[-1]
    assert (row["state"], row["requires"], row["missing"]) == ("inactive", ["models"], ["models"])

    host.add_plugins([from_object("shelf", Shelf)])
    host.plugins.reconcile()
    assert host.services.models.models == {"fake": model}
    host.plugins.block("provider")
    assert host.services.models.models == {}


def test_register_prompt_sections(tmp_path):
    class Persona:
        @staticmethod
        @hookimpl
        def register_prompt_sections(register, ctx):
            register("persona", "You are terse.", order=10)

    host = start(tmp_path, ("persona", Persona))
    section = host.prompt_sections.get("persona")
    assert (section.name, section.text, section.order) == ("persona", "You are terse.", 10)
    host.plugins.block("persona")
    assert "persona" not in host.prompt_sections


def test_register_tools(tmp_path):
    from host.tools import tool
    from tests.support import NoArgs

    @tool("noop", "Do nothing.", NoArgs)
    async def noop(args, exec):
        return "done"

    class Tools:
        @staticmethod
        @hookimpl
        def register_tools(register, ctx, config):
            register(noop)

    host = start(tmp_path, ("tools", Tools))
    assert host.tools.get("noop") is noop
    host.plugins.block("tools")
    assert host.tools.get("noop") is None


def test_a_hook_argument_with_a_default_is_still_passed(make_host):
    """pluggy lists arguments with defaults apart (kwargnames); the host passes them too."""
    import attrs

    from host import hookimpl

    seen: list[object] = []

    class Defaulted:
        @attrs.frozen
        class Config:
            level: int = 3

        @staticmethod
        @hookimpl
        def activate(scope, config=None):
            seen.append(config)

    make_host(("defaulted", Defaulted), config={"plugins": {"defaulted": {"level": 5}}})
    assert seen == [Defaulted.Config(level=5)]
