"""A child's tool filter by the sub-plugin that registered a tool (``sub_plugins``): how limits
combine, what the filter admits, and what it leaves alone."""

from __future__ import annotations

from host.naming import Owner, owning_plugin
from host.subagents.children import combine_filters
from host.tools.filter import SubPluginLimit, ToolFilter


def test_owners_round_trip_and_other_owners_are_no_plugin():
    assert owning_plugin(Owner("mcp.time")) == "mcp.time"
    assert str(Owner("mcp.time")) == 'plugin "mcp.time"'
    assert [owning_plugin(o) for o in ("test", "host", None, 'plugin "mcp.time"')] == [None] * 4


def test_limits_of_one_parent_intersect_and_other_parents_add_up():
    first = ToolFilter(allow=["a"], sub_plugins=[SubPluginLimit("mcp", ["time", "git"])])
    second = ToolFilter(
        deny=["b"],
        sub_plugins=[SubPluginLimit("mcp", ["git", "web"]), SubPluginLimit("x", ["y"])],
    )
    combined = combine_filters(first, second)
    assert combined == ToolFilter(
        allow=["a"],
        deny=["b"],
        sub_plugins=[SubPluginLimit("mcp", ["git"]), SubPluginLimit("x", ["y"])],
    )
    assert combined == ToolFilter(
        allow=("a",),
        deny=("b",),
        sub_plugins=(SubPluginLimit("mcp", ("git",)), SubPluginLimit("x", ("y",))),
    )


def test_admits_by_owning_sub_plugin_only():
    limit = ToolFilter(sub_plugins=(SubPluginLimit("mcp", ("time",)),))
    assert limit.admits("time__now", "mcp.time")
    assert limit.admits("time__now", "mcp.time.inner")  # a sub-plugin of an admitted one
    assert not limit.admits("git__status", "mcp.git")
    assert limit.admits("git__status", None)  # not registered by a plugin
    assert limit.admits("git__status", "mcpx.git")  # another parent
    assert limit.admits("anything", "mcp")  # the parent itself
    time_only = (SubPluginLimit("mcp", ("time",)),)
    assert not ToolFilter(deny=("t",), sub_plugins=time_only).admits("t", "mcp.time")
    assert not ToolFilter(sub_plugins=(SubPluginLimit("mcp", ()),)).admits("time__now", "mcp.time")


def test_a_descriptor_keeps_the_limit():
    from host.subagents.descriptors import (
        VERSION,
        ContinuableDescriptor,
        descriptor_data,
        parse_descriptor,
    )

    spec = ToolFilter(sub_plugins=[SubPluginLimit("mcp", ["time"])])
    descriptor = ContinuableDescriptor(
        version=VERSION, mode="continuable", provider="spawn", label="l", tool_filter=spec
    )
    data = descriptor_data(descriptor)
    assert data["tool_filter"] == {"sub_plugins": [{"parent": "mcp", "names": ["time"]}]}
    assert parse_descriptor(data) == descriptor
    data["tool_filter"]["sub_plugins"] = [{"parent": "mcp", "names": "time"}]
    assert parse_descriptor(data).reason == "corrupt"
