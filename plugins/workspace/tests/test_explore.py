"""The built-in Explore profile over the workspace tools: exactly the read tools (and a fetch
server's), a real search through them, and a project profile of that name overriding it."""

from __future__ import annotations

from host import hookimpl
from host.profiles.sources import EXPLORE_PERSONA
from host.testing import call, say
from host.tools import tool


def server_tools(*names: str) -> object:
    """A stand-in for an MCP server's plugin (``mcp.<server>``) registering ``names``."""

    class Server:
        @staticmethod
        @hookimpl
        def register_tools(register):
            for name in names:

                @tool(name=name)
                async def run(url: str) -> str:
                    """A tool of an MCP server.

                    Args:
                        url: Where.
                    """
                    return url

                register(run)

    return Server


def explore_harness(workspace, tree):
    servers = (("mcp.fetch", server_tools("fetch__fetch")), ("mcp.git", server_tools("git__commit")))
    h = workspace(delegation=True, others=servers)
    h.host.profiles.environ = {"AGENT_HOST_HOME": str(tree.root.parent / "home")}
    h.host.profiles.cwd = tree.root
    return h


async def test_an_explore_child_has_exactly_the_read_tools_and_finds_a_string(tree, workspace):
    h = explore_harness(workspace, tree)
    h.model.script(
        "root",
        call("subagent", description="find it", prompt="Where is needle returned?",
             subagent_type="Explore", run_in_background=False),
        say("found"),
    )  # fmt: skip
    h.model.script(
        "find it",
        call("grep", pattern="return 'needle'"),
        say("src/app.py:4 returns it."),
    )
    root = await h.root("root")
    root.followup("go")
    await root.wait_idle()
    (request, _) = h.model.requests_for("find it")
    assert [t.name for t in request.tools] == ["read_file", "list_files", "grep", "fetch__fetch"]
    assert EXPLORE_PERSONA in request.system_prompt  # the read-only rule opens it
    (child_id,) = h.session_ids() - {root.id}
    results = [m.content for m in await h.stored_messages(child_id, "tool")]
    assert results == ["src/app.py:4:    return 'needle'"]
    answer = [m.content for m in await h.stored_messages(root.id, "tool")]
    assert answer == ["src/app.py:4 returns it."]
    assert h.approvals.asked == []


async def test_a_project_profile_named_explore_overrides_the_built_in(tree, workspace):
    agents = tree.root / ".agent-host" / "agents"
    agents.mkdir(parents=True)
    (agents / "explore.md").write_text(
        "---\nname: Explore\ndescription: Our explorer\ntools: grep, write_file\n---\nOurs.\n"
    )
    h = explore_harness(workspace, tree)
    h.model.script("ours", say("ok"))
    result = await h.use(
        "subagent",
        {"description": "ours", "prompt": "p", "subagent_type": "Explore",
         "run_in_background": False},
    )  # fmt: skip
    assert (result.text, result.structured["subagent_type"]) == ("ok", "Explore")
    (request,) = h.model.requests_for("ours")
    assert [t.name for t in request.tools] == ["grep", "write_file"]
    assert "Ours." in request.system_prompt and EXPLORE_PERSONA not in request.system_prompt
    listed = h.host.tools.get("subagent").describe()
    assert "- Explore: Our explorer (tools: grep, write_file)" in listed


def test_explore_is_never_given_a_tool_that_changes_things(tree, workspace):
    h = explore_harness(workspace, tree)
    explore = h.host.profiles.load().get("Explore")
    changing = [name for name, made in h.host.tools.items() if made.needs_approval]
    assert sorted(changing) == ["edit_file", "run_command", "write_file"]
    assert not set(changing) & set(explore.tools)
