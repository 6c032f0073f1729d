"""Bad edits never leave the host without the plugin: the previous version keeps working, the
error is one clear line, and nothing leaks (no duplicate tools, no orphaned contributions)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from host.app import Host
from host.plugins.watch import ReloadLoop, WatchMap
from tests.reload.support import Plugins, plugin_tools, text_of, tools_source
from tests.reload.test_setup_contributions import CONTRIBUTOR
from tests.support import without_origin

FAILED = "reload of sturdy failed, previous version kept: "


def raising_hook(hook: str, message: str) -> str:
    return f"\n@hookimpl\ndef {hook}(scope):\n    raise RuntimeError({message!r})\n"


RAISES_ONCE = """
fired = []

def dispose():
    fired.append(True)
    if len(fired) == 1:
        1 / 0

@hookimpl
def activate(scope):
    scope.add(dispose)
"""

BAD_EDITS = {
    "syntax error": ("def broken(:\n", "SyntaxError: "),
    "import error": ("import no_such_module_anywhere\n", "ModuleNotFoundError: "),
    "raising at import": ("raise ImportError('half-written')\n", "ImportError: half-written"),
    "raising activation": (
        tools_source({"hello": "new"}, extra=raising_hook("activate", "cannot start")),
        "RuntimeError: cannot start",
    ),
    "unusable requires": ('requires = "sessions"\n', "TypeError: requires must be a tuple"),
}


@pytest.mark.parametrize("edit", list(BAD_EDITS))
async def test_a_bad_edit_keeps_the_previous_version(
    edit: str, plugins: Plugins, dev_host: Callable[..., Host]
) -> None:
    source, error = BAD_EDITS[edit]
    plugins.install("sturdy", tools_source({"hello": "old"}))
    host = dev_host({"sturdy"})

    plugins.write("sturdy", source)
    line = host.reload("sturdy").line()
    assert line.startswith(FAILED + error)
    assert "\n" not in line and "Traceback" not in line
    assert host.plugins.records["sturdy"].state == "active"
    assert plugin_tools(host, "sturdy") == ["hello"]
    assert await text_of(host, "hello") == "old"

    plugins.write("sturdy", tools_source({"hello": "fixed"}))
    assert host.reload("sturdy").ok
    assert plugin_tools(host, "sturdy") == ["hello"]
    assert await text_of(host, "hello") == "fixed"


async def test_a_raising_old_disposer_still_lets_the_new_version_in(
    plugins: Plugins, dev_host: Callable[..., Host]
) -> None:
    """The old version's disposer raises at the swap: its scope is abandoned, the error is in
    the one line, and the new version serves (before, such a plugin could never be reloaded)."""
    plugins.install("sturdy", tools_source({"hello": "old"}, extra=RAISES_ONCE))
    host = dev_host({"sturdy"})

    plugins.write("sturdy", tools_source({"hello": "new"}))
    outcome = host.reload("sturdy")
    assert outcome.ok and outcome.state == "active"
    assert outcome.line().startswith("reloaded sturdy in ")
    assert outcome.line().endswith(
        " ms; disposing the previous version failed: ZeroDivisionError: division by zero"
    )
    assert "\n" not in outcome.line()
    assert host.plugins.records["sturdy"].state == "active"
    assert plugin_tools(host, "sturdy") == ["hello"]
    assert await text_of(host, "hello") == "new"

    plugins.write("sturdy", tools_source({"hello": "newer"}))
    again = host.reload("sturdy")
    assert again.ok and again.disposal is None  # reported once, with the swap it belonged to
    assert await text_of(host, "hello") == "newer"


async def test_a_failed_activation_leaves_no_orphaned_contribution(
    plugins: Plugins, dev_host: Callable[..., Host]
) -> None:
    plugins.install("prober", CONTRIBUTOR.format(text="v1"))
    host = dev_host({"prober"})
    setup = host.services.subagents.setup
    assert len(setup) == 1

    registered = "scope.add(ctx.subagents.register_continuable_setup(contribute))"
    broken = CONTRIBUTOR.format(text="v2").replace(
        registered, registered + "\n    raise RuntimeError('late failure')"
    )
    plugins.write("prober", broken)
    outcome = host.reload("prober")
    assert without_origin(outcome.line()) == (
        "reload of prober failed, previous version kept: RuntimeError: late failure"
    )
    assert len(setup) == 1  # the old contribution, back; the new one rolled back
    assert host.plugins.records["prober"].state == "active"


async def batches(*rounds: list[Path]) -> AsyncIterator[list[Path]]:
    for paths in rounds:
        yield paths


async def test_a_file_deleted_mid_edit_keeps_the_previous_version(
    plugins: Plugins, dev_host: Callable[..., Host]
) -> None:
    plugins.install("sturdy", tools_source({"hello": "old"}))
    host = dev_host({"sturdy"})
    lines: list[str] = []
    path = plugins.path("sturdy")

    loop = ReloadLoop(WatchMap(host.plugins), lines.append)
    path.unlink()  # the editor removed the file and has not written the new one yet
    assert await loop.run(batches([path])) is None
    (line,) = lines
    assert line.startswith(FAILED + "ModuleNotFoundError: ")
    assert await text_of(host, "hello") == "old"

    plugins.write("sturdy", tools_source({"hello": "rewritten"}))
    assert await loop.run(batches([path])) is None
    assert lines[1].startswith("reloaded sturdy in ")
    assert plugin_tools(host, "sturdy") == ["hello"]
    assert await text_of(host, "hello") == "rewritten"
