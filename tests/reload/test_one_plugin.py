"""Hot reload of one plugin: new code first, the old version kept whenever the new one fails."""

from __future__ import annotations

from pathlib import Path

from host.app import Host
from host.plugins.discovery import discover, from_object
from host.settings import HostSettings
from tests.support import without_origin

VERSIONED = """
import attrs
from host import hookimpl
from host.tools import tool

requires = {requires!r}

@attrs.frozen
class Args:
    pass

@tool("version", "Say which version is loaded.", Args)
async def version(args, exec):
    return {text!r}

@hookimpl
def register_tools(register):
    register(version)
{extra}
"""


def source(text: str, requires: tuple[str, ...] = (), extra: str = "") -> str:
    return VERSIONED.format(text=text, requires=requires, extra=extra)


def start(tmp_path: Path, names: set[str], *extra: tuple[str, object]) -> Host:
    host = Host(HostSettings(data_dir=tmp_path / "data"))
    host.add_plugins([from_object(name, obj) for name, obj in extra])
    host.add_plugins(c for c in discover() if c.name in names)
    return host.start()


async def version_text(host: Host) -> str:
    from host.testing import call_tool

    return (await call_tool(host, "version", {}, agent=object())).text


def write(tmp_path: Path, module: str, text: str) -> None:
    (tmp_path / "site" / f"{module}.py").write_text(text)


async def test_reload_swaps_in_the_new_code(site, unique, tmp_path):
    module = unique("versioned")
    site(entry_points={"versioned": module}, modules={module: source("one")})
    host = start(tmp_path, {"versioned"})
    assert await version_text(host) == "one"

    write(tmp_path, module, source("two"))
    outcome = host.reload("versioned")
    assert outcome.ok and outcome.state == "active"
    assert outcome.line().startswith("reloaded versioned in ")
    assert await version_text(host) == "two"
    assert host.plugins.records["versioned"].tools == ["version"]


async def test_an_import_error_keeps_the_previous_version_running(site, unique, tmp_path):
    module = unique("fragile")
    site(entry_points={"fragile": module}, modules={module: source("stable")})
    host = start(tmp_path, {"fragile"})
    old_module = __import__(module)

    write(tmp_path, module, "def broken(:\n")
    outcome = host.reload("fragile")
    assert not outcome.ok
    assert outcome.line().startswith("reload of fragile failed, previous version kept: SyntaxError")
    assert await version_text(host) == "stable"
    assert host.plugins.records["fragile"].state == "active"
    import sys

    assert sys.modules[module] is old_module


async def test_an_activation_error_puts_the_old_version_back(site, unique, tmp_path):
    module = unique("activating")
    site(entry_points={"activating": module}, modules={module: source("good")})
    host = start(tmp_path, {"activating"})

    broken = source(
        "bad", extra="\n@hookimpl\ndef activate(scope):\n    raise RuntimeError('no')\n"
    )
    write(tmp_path, module, broken)
    outcome = host.reload("activating")
    assert not outcome.ok
    assert without_origin(outcome.error or "") == "RuntimeError: no"
    assert outcome.state == "active"
    assert await version_text(host) == "good"


async def test_fixing_a_failed_plugin_by_reload(site, unique, tmp_path):
    module = unique("fixable")
    site(entry_points={"fixable": module}, modules={module: "raise ImportError('half-written')\n"})
    host = start(tmp_path, {"fixable"})
    assert host.plugins.records["fixable"].state == "failed"

    write(tmp_path, module, source("fixed"))
    assert host.reload("fixable").ok
    assert await version_text(host) == "fixed"


async def test_reloading_a_service_provider_reactivates_its_dependents(site, unique, tmp_path):
    from host import hookimpl

    provider = unique("weather_provider")
    provider_source = """
from host import hookimpl

@hookimpl
def register_services(register):
    register("weather", {value!r})
"""
    site(
        entry_points={"weather": provider}, modules={provider: provider_source.format(value="rain")}
    )
    seen: list[str] = []

    class Dependent:
        requires = ("weather",)

        @staticmethod
        @hookimpl
        def activate(ctx, scope):
            seen.append(ctx.weather)
            scope.add(lambda: seen.append("disposed"))

    host = start(tmp_path, {"weather"}, ("dependent", Dependent))
    assert seen == ["rain"]

    write(tmp_path, provider, provider_source.format(value="sun"))
    assert host.reload("weather").ok
    assert seen == ["rain", "disposed", "sun"]
    assert host.plugins.records["dependent"].state == "active"


async def test_a_failed_reload_restores_uses_and_hooks_too(site, unique, tmp_path):
    module = unique("using")
    site(entry_points={"using": module}, modules={module: source("good")})
    host = start(tmp_path, {"using"})
    record = host.plugins.records["using"]
    before = (record.uses, record.hooks)

    broken = source(
        "bad",
        extra="\nuses = ('projections',)\n@hookimpl\ndef activate(scope):\n    raise RuntimeError('no')\n",
    )
    write(tmp_path, module, broken)
    assert not host.reload("using").ok
    assert (record.uses, record.hooks) == before == ((), frozenset({"register_tools"}))
    assert await version_text(host) == "good"
