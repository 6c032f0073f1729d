"""Tool globs (``host.tools.globs``): a glob matches a tool's name or the plugin that registered
it, nothing else (not a parent of that plugin); the same function serves every list of them."""

from __future__ import annotations

import pytest

from host.naming import NamedRegistry, Owner
from host.subagents.children import combine_filters
from host.subagents.descriptors import (
    VERSION,
    ContinuableDescriptor,
    descriptor_data,
    parse_descriptor,
)
from host.tools.filter import ToolFilter
from host.tools.globs import matches, registered_by, unmatched


@pytest.mark.parametrize(
    "glob", ["git__status", "git__*", "*status", "mcp.git", "mcp.*", "mcp.g?t", "m*"]
)
def test_a_glob_matches_the_tools_name_or_its_plugin(glob: str) -> None:
    assert matches([glob], "git__status", "mcp.git")


@pytest.mark.parametrize(
    "glob", ["git__push", "mcp.time", "mcp.git.*", "mcp.", "MCP.*", "git", "mcp", "mcp.gi"]
)
def test_a_glob_matching_neither_does_not_match(glob: str) -> None:
    assert not matches([glob], "git__status", "mcp.git")


def test_a_tool_of_no_plugin_is_matched_by_its_name_only() -> None:
    assert matches(["mcp.*", "git__*"], "git__status")
    assert not matches(["mcp.*", "mcp"], "git__status")
    assert not matches(["mcp.*"], "git__status", "")
    assert not matches([], "git__status", "mcp.git")


def test_a_plugins_parent_does_not_match_its_tools() -> None:
    assert not matches(["mcp"], "git__status", "mcp.git")
    assert not matches(["mcp.git"], "x", "mcp.git.inner")
    assert matches(["mcp.git.*"], "x", "mcp.git.inner")


def test_a_plain_name_matches_a_plugin_of_that_name_not_its_sub_plugins() -> None:
    assert matches(["shell"], "shell", "builtins")
    assert matches(["shell"], "run", "shell")
    assert not matches(["shell"], "run", "shell.remote")


TOOLS = {"shell": "builtins", "git__status": "mcp.git", "recall": None}
MCP_OF_NO_TOOL = (
    'matches plugin "mcp", which registers no tool; "mcp.*" matches its sub-plugins\' tools'
)
RUNNING = {"builtins": True, "mcp": True, "mcp.git": True, "mcp.memory": False, "approvals": True}


def test_unmatched_names_the_globs_matching_no_tool_in_order_with_why() -> None:
    globs = ["mcp.*", "shel?", "nothing*", "recall", "git__*", "mcp.time"]
    assert unmatched(globs, {"shell": None}, {"mcp": True}) == [
        ("mcp.*", "matches no tool and no plugin"),
        ("nothing*", "matches no tool and no plugin"),
        ("recall", "matches no tool and no plugin"),
        ("git__*", "matches no tool and no plugin"),
        ("mcp.time", "matches no tool and no plugin"),
    ]
    assert unmatched(globs, TOOLS, RUNNING) == [
        ("nothing*", "matches no tool and no plugin"),
        ("mcp.time", "matches no tool and no plugin"),
    ]


def test_a_glob_matching_only_running_plugins_of_no_tool_is_named_with_them() -> None:
    assert unmatched(["mcp", "approvals", "a*", "mcp*"], TOOLS, RUNNING) == [
        ("mcp", MCP_OF_NO_TOOL),
        ("approvals", 'matches plugin "approvals", which registers no tool'),
        ("a*", 'matches plugin "approvals", which registers no tool'),
    ]
    assert unmatched(["*s"], {}, RUNNING) == [
        ("*s", 'matches plugins "builtins", "approvals", which register no tool')
    ]
    three = 'matches plugins "mcp", "mcp.git", "mcpx", which register no tool'
    assert unmatched(["mcp*"], {}, {"mcp": True, "mcp.git": True, "mcpx": True}) == [
        ("mcp*", f"{three}; \"mcp.*\" matches their sub-plugins' tools")
    ]


def test_a_glob_matching_a_plugin_that_does_not_run_is_no_warning() -> None:
    assert unmatched(["mcp.memory", "mcp.*"], TOOLS, RUNNING) == []
    assert unmatched(["mcp.*"], {}, {"mcp": True, "mcp.memory": False}) == []


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
    deployment = ToolFilter(allow=["mcp.*", "read_file"], deny=["git__push"])
    profile = ToolFilter(allow=["time__*", "read_file"], deny=["shell"])
    combined = combine_filters(deployment, profile)
    assert combined == ToolFilter(
        allow=["mcp.*", "read_file"],
        deny=["git__push", "shell"],
        also_allow=[["time__*", "read_file"]],
    )
    assert combine_filters(combined, deployment) == combined  # the same list is kept once
    admits = combined.admits
    assert admits("time__now", "mcp.time") and admits("read_file", "files")
    assert not admits("git__status", "mcp.git")  # within the deployment's, not the profile's
    assert not admits("time__now", "other")  # within the profile's, not the deployment's
    descriptor = ContinuableDescriptor(
        version=VERSION, mode="continuable", provider="spawn", label="l", tool_filter=combined
    )
    data = descriptor_data(descriptor)
    assert data["tool_filter"]["also_allow"] == [["time__*", "read_file"]]
    assert parse_descriptor(data) == descriptor
