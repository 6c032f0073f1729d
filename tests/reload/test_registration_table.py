"""A hot reload checks what the new version registers as an activation does: each hook's
register and its staged check are one entry of the registration table, so a start and a
reload accept and refuse the same registrations."""

from __future__ import annotations

from collections.abc import Callable

from host.app import Host
from tests.reload.support import Plugins

TOOL = """
import attrs
from host import hookimpl
from host.tools import Tool, tool

@attrs.frozen
class Args:
    value: str

async def run(args, exec):
    return {text!r}

class Lazy(Tool):
    @property
    def parameters(self):  # its schema fails only once asked for
        raise TypeError("no schema yet")

made = tool("odd", "A tool.", Args)(run)
odd = Lazy(**attrs.asdict(made, recurse=False)) if {lazy} else made

@hookimpl
def register_tools(register):
    register(odd)
"""


async def test_a_reload_decides_on_a_tool_as_a_start_does(
    plugins: Plugins, dev_host: Callable[..., Host]
) -> None:
    # a tool whose schema is not asked for when it is registered: accepted or refused alike
    # at a start and at a reload
    plugins.install("odd", TOOL.format(text="one", lazy=False))
    host = dev_host({"odd"})
    assert host.plugins.records["odd"].state == "active"
    plugins.write("odd", TOOL.format(text="two", lazy=True))
    outcome = host.reload("odd")
    started = dev_host({"odd"}).plugins.records["odd"]
    assert (outcome.ok, outcome.error) == (started.state == "active", started.error)
    assert started.state == "active"
