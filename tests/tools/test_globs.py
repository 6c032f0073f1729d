"""Tool globs (``host.tools.globs``): a glob matches a tool's name or the plugin that registered
it (or a plugin that one is a sub-plugin of); the same function serves every list of them."""

from __future__ import annotations

import pytest

from host.naming import NamedRegistry, Owner
from host.subagents.children import combine_filters, to_tool_filter
from host.subagents.descriptors import (
    VERSION,
    ContinuableDescriptor,
    ToolFilterSpec,
    descriptor_data,
    parse_descriptor,
)
from host.tools.globs import matches, plugin_and_parents, registered_by, unmatched


@pytest.mark.parametrize(
    "glob", ["git__status", "git__*", "*status", "mcp.git", "mcp.*", "mcp", "mcp.g?t", "m*"]
)
def test_a_glob_matches_the_tools_name_or_its_plugin(glob: str) -> None:
    assert matches([glob], "git__status", "mcp.git")


@pytest.mark.parametrize("glob", ["git__push", "mcp.time", "mcp.git.*", "mcp.", "MCP.*", "git"])
def test_a_glob_matching_neither_does_not_match(glob: str) -> None:
    assert not matches([glob], "git__status", "mcp.git")


def test_a_tool_of_no_plugin_is_matched_by_its_name_only() -> None:
    assert matches(["mcp.*", "git__*"], "git__status")
    assert not matches(["mcp.*", "mcp"], "git__status")
    assert not matches(["mcp.*"], "git__status", "")
    assert not matches([], "git__status", "mcp.git")


def test_a_plugins_parents_count_and_no_partial_name_does() -> None:
    assert plugin_and_parents("mcp.git.inner") == ["mcp.git.inner", "mcp.git", "mcp"]
    assert plugin_and_parents(None) == []
    assert matches(["mcp.git"], "x", "mcp.git.inner")
    assert not matches(["mcp.gi"], "x", "mcp.git")


def test_unmatched_names_the_globs_matching_no_tool_and_no_plugin_in_order() -> None:
    globs = ["mcp.*", "shel?", "nothing*", "approvals", "git__*"]
    assert unmatched(globs, ["shell"], ["mcp", "approvals"]) == ["mcp.*", "nothing*", "git__*"]
    assert unmatched(globs, ["shell", "git__status"], ["mcp.git"]) == ["nothing*", "approvals"]


def test_registered_by_names_the_plugin_of_the_registered_tool_only() -> None:
    registry = NamedRegistry[object]("tool")
    status, other = object(), object()
    registry.register("git__status", status, owner=Owner("mcp.git"))
    registry.register("echo", other, owner="test")
    assert registered_by(registry, "git__status") == "mcp.git"
    assert registered_by(registry, "git__status", status) == "mcp.git"
    assert registered_by(registry, "git__status", other) is None  # an agent's own tool
    assert registered_by(registry, "echo", other) is None
    assert registered_by(registry, "missing") is None


def test_a_childs_allow_lists_combine_as_all_of_them_and_are_recorded() -> None:
    deployment = ToolFilterSpec(allow=["mcp.*", "read_file"], deny=["git__push"])
    profile = ToolFilterSpec(allow=["time__*", "read_file"], deny=["shell"])
    combined = combine_filters(deployment, profile)
    assert combined == ToolFilterSpec(
        allow=["mcp.*", "read_file"],
        deny=["git__push", "shell"],
        also_allow=[["time__*", "read_file"]],
    )
    assert combine_filters(combined, deployment) == combined  # the same list is kept once
    admits = to_tool_filter(combined).admits
    assert admits("time__now", "mcp.time") and admits("read_file", "files")
    assert not admits("git__status", "mcp.git")  # within the deployment's, not the profile's
    assert not admits("time__now", "other")  # within the profile's, not the deployment's
    descriptor = ContinuableDescriptor(
        version=VERSION, mode="continuable", provider="spawn", label="l", tool_filter=combined
    )
    data = descriptor_data(descriptor)
    assert data["tool_filter"]["also_allow"] == [["time__*", "read_file"]]
    assert parse_descriptor(data) == descriptor
