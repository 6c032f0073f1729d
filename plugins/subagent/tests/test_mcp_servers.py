"""Children and MCP servers: a profile's ``mcp_servers`` limits a child to those servers' tools,
a server that is not connected starts nothing, and the deployment's ``allow``/``deny`` filter
MCP tools like any tool. MCP tools are recognised by the plugin that registered them
(``mcp.<server>``), never by their names; so are the globs of ``allow``/``deny`` and of
profiles' ``tools``/``disallowed_tools`` that name that plugin (``mcp.*``, ``mcp.git``)."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import agent_host_mcp
import pytest

from host import hookimpl
from host.agents.scripted import ScriptedModel, call, say
from host.app import Host
from host.naming import Owner
from host.sessions.model import SubagentDescriptorEvent
from host.testing import call_tool
from host.tools import ToolResult
from tests.profiles import support as profiles
from tests.support import named_tool, scripted

MCP_TIME = {"command": str(Path(sys.executable).parent / "mcp-server-time")}


class Server:
    """A stand-in for one MCP server's sub-plugin: registers ``<server>__<tool>`` tools."""

    def __init__(self, tools: list[str]) -> None:
        self.tools = tools

    @hookimpl
    def register_tools(self, register):
        for name in self.tools:
            register(named_tool(name))


class FakeMcp:
    """A plugin named ``mcp`` whose sub-plugins ``mcp.time`` and ``mcp.git`` offer tools the
    way the real one does (fast: no server processes)."""

    @staticmethod
    @hookimpl
    def register_plugins(register):
        register("time", lambda: Server(["time__get_current_time", "time__convert_time"]))
        register("git", lambda: Server(["git__status"]))
        register("off", lambda: Server(["off__thing"]), blocked="not trusted")


class Tools:
    """Plain global tools, one of them named like an MCP tool but not from a server."""

    @staticmethod
    @hookimpl
    def register_tools(register):
        for name in ("read_file", "shell", "lookalike__tool"):
            register(named_tool(name))


def write(directory: Path, name: str, **fields: str) -> None:
    """Profile ``name`` in ``directory/<name>.md`` (``tests.profiles.support.write``)."""
    profiles.write(directory, f"{name}.md", name, **fields)


def make(
    tmp_path: Path, *plugins: Any, config: Mapping[str, Any] | None = None
) -> tuple[Host, Path]:
    """A ``profile_host`` with ``Tools`` and ``plugins``, and its user profile directory."""
    host, dirs = profiles.profile_host(tmp_path, ("tools", Tools), *plugins, config=config)
    return host, dirs.user


def offered(model: ScriptedModel, label: str) -> list[str]:
    return [t.name for t in model.requests_for(label)[-1].tools]


async def start(
    host: Host, root, label: str, profile: str | None = None, *, background: bool = False
) -> ToolResult:
    args = {"description": label, "prompt": "p", "run_in_background": background}
    if profile is not None:
        args["subagent_type"] = profile
    result = await call_tool(host, "subagent", args, agent=root)
    if background and not result.is_error:
        activation = host.services.subagents.manager().activation(result.structured["subagent_id"])
        if activation is not None:
            await activation.wait_done()
        await root.wait_idle()
    return result


async def stored(host: Host) -> int:
    """How many sessions are stored."""
    return len(await host.services.session_persistence.list())


async def test_a_profile_limits_a_child_to_its_servers_tools_and_records_it(tmp_path):
    host, agents = make(tmp_path, ("mcp", FakeMcp))
    try:
        write(agents, "clock", mcp_servers="[time]")
        write(agents, "quiet", mcp_servers="[]", disallowed_tools="shell")
        write(
            agents, "narrow", tools="read_file, git__status, time__convert_time", mcp_servers="git"
        )
        model = scripted(host)
        for label in ("clock", "quiet", "narrow", "plain"):
            model.script(label, say("ok"))
        root = await host.services.agents.create(label="root")
        started = {}
        for label in ("clock", "quiet", "narrow"):
            result = await start(host, root, label, label, background=True)
            assert not result.is_error, result.text
            started[label] = result.structured["subagent_id"]
        await start(host, root, "plain")

        everything = ["read_file", "shell", "lookalike__tool"]
        time_tools = ["time__get_current_time", "time__convert_time"]
        first = ["ask_user", "subagent"]
        assert offered(model, "plain") == [*first, *everything, *time_tools, "git__status"]
        assert offered(model, "clock") == [*first, *everything, *time_tools]
        # Not an MCP tool (no mcp.<server> registered it), so the limit does not touch it.
        assert offered(model, "quiet") == [*first, "read_file", "lookalike__tool"]
        assert offered(model, "narrow") == ["read_file", "git__status"]  # both filters apply

        clock = await host.services.session_persistence.inspect(started["clock"])
        (event,) = [e.body for e in clock.events if isinstance(e.body, SubagentDescriptorEvent)]
        assert event.descriptor["tool_filter"] == {
            "sub_plugins": [{"parent": "mcp", "names": ["time"]}]
        }
        assert "- clock: d (MCP servers: time)" in host.tools.get("subagent").describe()
    finally:
        await host.aclose()


async def test_a_server_that_is_not_active_starts_nothing(tmp_path):
    host, agents = make(tmp_path, ("mcp", FakeMcp))
    try:
        write(agents, "missing", mcp_servers="time, nowhere")
        write(agents, "untrusted", mcp_servers="[off]")  # blocked sub-plugin
        write(agents, "clock", mcp_servers="[time]")
        root = await host.services.agents.create(label="root")
        before = await stored(host)
        host.plugins.fail("mcp.time", "exited (status 1)")  # a server that died meanwhile
        assert "time__get_current_time" not in host.tools
        cases = (("missing", "time"), ("untrusted", "off"), ("clock", "time"))
        for profile, server in cases:
            for background in (False, True):
                result = await start(host, root, profile, profile, background=background)
                assert result.is_error
                assert result.text == f'required MCP server "{server}" is not connected'
        assert await stored(host) == before
    finally:
        await host.aclose()


@pytest.fixture
def home(tmp_path, monkeypatch):
    """Trust decisions of the real mcp plugin go to a throwaway home."""
    monkeypatch.setenv("AGENT_HOST_HOME", str(tmp_path / "trust-home"))


async def test_real_server_a_child_calls_through_the_parents_connection(tmp_path, home):
    config = {
        "plugins": {
            "mcp": {"servers": {"time": MCP_TIME}},
            "subagent": {
                "tools": [
                    {"name": "subagent", "provider": "spawn"},
                    {
                        "name": "subagent_no_clock",
                        "provider": "spawn",
                        "deny": ["time__get_current_time"],
                    },
                    {
                        "name": "subagent_clock_only",
                        "provider": "spawn",
                        "allow": ["time__get_current_time"],
                    },
                    {"name": "subagent_no_mcp", "provider": "spawn", "deny": ["mcp.*"]},
                ]
            },
        }
    }
    host, agents = make(tmp_path, ("mcp", agent_host_mcp), config=config)
    try:
        assert host.tools.owner("time__get_current_time") == Owner("mcp.time")
        write(agents, "clock", mcp_servers="[time]")
        write(agents, "gitter", mcp_servers="[time, git]")
        model = scripted(host)
        model.script("clock", call("time__get_current_time", timezone="UTC"), say("It is late."))
        root = await host.services.agents.create(label="root")
        result = await start(host, root, "clock", "clock")
        assert (result.is_error, result.text) == (False, "It is late.")
        [answer] = [m for m in model.requests_for("clock")[-1].messages if m.role == "tool"]
        assert not answer.is_error and json.loads(answer.content)["timezone"] == "UTC"
        assert "time__convert_time" in offered(model, "clock")

        before = await stored(host)
        refused = await start(host, root, "gitter", "gitter")
        assert (refused.is_error, refused.text) == (
            True,
            'required MCP server "git" is not connected',
        )
        assert await stored(host) == before

        # The deployment's allow/deny filter MCP tools like any other tool.
        filtered = (
            ("subagent_no_clock", "deny"),
            ("subagent_clock_only", "allow"),
            ("subagent_no_mcp", "no-mcp"),
        )
        for tool_name, label in filtered:
            model.script(label, say("ok"))
            args = {"description": label, "prompt": "p", "run_in_background": False}
            assert not (await call_tool(host, tool_name, args, agent=root)).is_error
        assert "time__get_current_time" not in offered(model, "deny")
        assert "time__convert_time" in offered(model, "deny")
        assert offered(model, "allow") == ["time__get_current_time"]
        assert not any(name.startswith("time__") for name in offered(model, "no-mcp"))
        assert "read_file" in offered(model, "no-mcp")
        assert await stored(host) == before + 3  # the three children that did start
    finally:
        await host.aclose()


# Tool globs (``host.tools.globs``) in the delegation tool's allow/deny and profiles' tools and
# disallowed_tools match a tool's name or its plugin: ``mcp.*`` is every MCP server's tools.

FIRST = ["ask_user", "subagent"]
PLAIN = ["read_file", "shell", "lookalike__tool"]
TIME = ["time__get_current_time", "time__convert_time"]


def tools_config(**filters: list[str]) -> dict[str, object]:
    """``[plugins.subagent]`` with ``subagent`` unfiltered and ``limited`` filtered."""
    limited = {"name": "limited", "provider": "spawn", **filters}
    return {"plugins": {"subagent": {"tools": [{"name": "subagent"}, limited]}}}


async def run_child(host: Host, tool: str, label: str, profile: str | None = None) -> list[str]:
    """Start a foreground child through ``tool``; the tools its model was offered."""
    model = scripted(host)
    model.script(label, say("ok"))
    root = await host.services.agents.create(label="root")
    args = {"description": label, "prompt": "p", "run_in_background": False}
    if profile is not None:
        args["subagent_type"] = profile
    result = await call_tool(host, tool, args, agent=root)
    assert not result.is_error, result.text
    return offered(model, label)


async def test_the_delegation_tools_deny_of_mcp_star_takes_every_mcp_tool(tmp_path: Path):
    host, _ = make(tmp_path, ("mcp", FakeMcp), config=tools_config(deny=["mcp.*", "shell"]))
    try:
        first = [*FIRST, "limited"]
        assert await run_child(host, "limited", "c") == [*first, "read_file", "lookalike__tool"]
        assert await run_child(host, "subagent", "d") == [*first, *PLAIN, *TIME, "git__status"]
    finally:
        await host.aclose()


async def test_the_delegation_tools_allow_names_a_server_by_its_plugin(tmp_path: Path):
    host, _ = make(tmp_path, ("mcp", FakeMcp), config=tools_config(allow=["mcp.git", "read_*"]))
    try:
        assert await run_child(host, "limited", "c") == ["read_file", "git__status"]
    finally:
        await host.aclose()


async def test_the_delegation_tools_allow_of_mcp_gives_no_mcp_tool(tmp_path: Path):
    host, _ = make(tmp_path, ("mcp", FakeMcp), config=tools_config(allow=["mcp", "read_file"]))
    try:  # ``mcp`` is the plugin that runs the servers; their tools are ``mcp.*``
        assert await run_child(host, "limited", "c") == ["read_file"]
    finally:
        await host.aclose()


async def test_a_profiles_tools_and_disallowed_tools_are_globs_too(tmp_path: Path):
    host, agents = make(tmp_path, ("mcp", FakeMcp))
    try:
        write(agents, "clock", tools="mcp.time, read_file")
        write(agents, "offline", disallowed_tools="mcp.*")
        write(agents, "converter", tools="'*_convert_*'")
        assert await run_child(host, "subagent", "a", "clock") == ["read_file", *TIME]
        offline = await run_child(host, "subagent", "b", "offline")
        assert offline == [*FIRST, *PLAIN]
        assert await run_child(host, "subagent", "c", "converter") == ["time__convert_time"]
    finally:
        await host.aclose()


async def test_a_profile_within_a_deployments_globs_gets_what_both_allow(tmp_path: Path):
    config = tools_config(allow=["mcp.*", "read_file"], deny=["git__*"])
    host, agents = make(tmp_path, ("mcp", FakeMcp), config=config)
    try:
        write(agents, "wide", tools="time__get_current_time, git__status, shell, read_file")
        write(agents, "servers", tools="mcp.*")
        write(agents, "parent", tools="mcp")
        assert await run_child(host, "limited", "a", "wide") == [
            "read_file",
            "time__get_current_time",
        ]
        assert await run_child(host, "limited", "b", "servers") == TIME
        assert await run_child(host, "limited", "c", "parent") == []
    finally:
        await host.aclose()


async def test_a_project_profile_is_judged_by_the_deployments_globs(tmp_path: Path):
    config = tools_config(allow=["mcp.*", "read_file"], deny=["mcp.git"])
    host, _ = make(tmp_path, ("mcp", FakeMcp), config=config)
    project = tmp_path / "project" / ".agent-host" / "agents"
    try:
        write(project, "clock", tools="mcp.time, time__convert_time, read_file")
        write(project, "gitter", tools="git__status, mcp.git, git__*")
        write(project, "sneaky", tools="shell")
        description = host.tools.get("limited").describe()
        assert "- clock: d" in description
        assert "gitter" not in description and "sneaky" not in description
        assert await run_child(host, "limited", "a", "clock") == ["read_file", *TIME]
        refused = await call_tool(
            host,
            "limited",
            {"description": "g", "prompt": "p", "subagent_type": "gitter"},
            agent=await host.services.agents.create(label="root"),
        )
        assert refused.is_error
        assert (
            f"{project}/gitter.md: tools: names tools the deployment does not allow: "
            "git__status, mcp.git, git__*"  # a glob is judged as written
        ) in refused.text
    finally:
        await host.aclose()
