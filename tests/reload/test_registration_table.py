"""A hot reload checks what the new version registers as an activation does: each hook's
register and its staged check are one entry of the registration table, so a start and a
reload accept and refuse the same registrations."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from host.app import Host
from tests.reload.support import Plugins

PARAMS_TOOL = """
import attrs
from host import hookimpl
from host.tools import Tool

@attrs.frozen
class Args:
    value: {annotation}

async def run(args, exec):
    return {text!r}

@hookimpl
def register_tools(register):
    register(Tool("odd", "A tool.", Args, run))
"""


async def test_a_reload_accepts_the_tool_a_start_accepts(
    plugins: Plugins, dev_host: Callable[..., Host], tmp_path: Path
) -> None:
    # a params class whose schema the host cannot build: registering it declares nothing to
    # check (its form was checked when made), at a start as at a reload
    plugins.install("odd", PARAMS_TOOL.format(annotation="str", text="one"))
    host = dev_host({"odd"})
    assert host.plugins.records["odd"].state == "active"
    before = host.tools.get("odd")
    plugins.write("odd", PARAMS_TOOL.format(annotation="complex", text="two"))
    outcome = host.reload("odd")
    assert (outcome.ok, outcome.error) == (True, None)
    started = dev_host({"odd"})
    assert started.plugins.records["odd"].state == "active"
    assert host.tools.get("odd") is not before and host.plugins.records["odd"].tools == ["odd"]
