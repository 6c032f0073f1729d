"""The ``mcp`` plugin in a host: one sub-plugin per server, tools in agent turns, trust,
failures that stay with their server, and no process left behind."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import agent_host_mcp
import pytest

from host.agents import ScriptedModel, call, say
from host.app import Host
from host.plugins.discovery import from_object
from host.plugins.selection import Selection
from host.settings import HostSettings
from host.tools import ToolProgress
from tests.support import alive, plugin_rows

BIN = Path(sys.executable).parent
TIME = {"command": str(BIN / "mcp-server-time")}
FAULT = {"command": sys.executable, "args": [str(Path(__file__).with_name("fault_server.py"))]}
PLUGIN = ("mcp", agent_host_mcp)


def servers(**definitions):
    return {"plugins": {"mcp": {"servers": definitions}}}


async def turn_result(host, name, **arguments):
    """Run one scripted turn calling ``name``; the tool message the model then saw."""
    model = host.services.models.resolve("scripted")
    model.script("user", call(name, **arguments), say("ok"))
    agent = await host.services.agents.create(label="user")
    agent.followup("go")
    await agent.wait_idle()
    [result] = [m for m in model.requests[-1].messages if m.role == "tool"]
    return result


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    """Trust decisions go to a throwaway home."""
    monkeypatch.setenv("AGENT_HOST_HOME", str(tmp_path / "home"))


async def test_an_agent_turn_calls_an_mcp_tool_and_the_result_reaches_the_model(make_host):
    host = make_host(PLUGIN, config=servers(time=TIME))
    assert plugin_rows(host)["mcp.time"]["state"] == "active"
    assert plugin_rows(host)["mcp.time"]["tools"] == [
        "time__get_current_time",
        "time__convert_time",
    ]
    assert isinstance(host.services.models.resolve("scripted"), ScriptedModel)
    result = await turn_result(host, "time__get_current_time", timezone="UTC")
    assert not result.is_error
    assert json.loads(result.content)["timezone"] == "UTC"
    await host.aclose()


async def test_bad_arguments_are_refused_against_the_servers_own_schema(make_host):
    host = make_host(PLUGIN, config=servers(time=TIME))
    result = await turn_result(host, "time__get_current_time", zone="UTC")
    assert result.is_error
    assert result.content.startswith("invalid arguments for time__get_current_time: arguments: ")
    assert "'timezone' is a required property" in result.content
    await host.aclose()


def test_each_server_fails_alone_with_one_line(make_host):
    host = make_host(
        PLUGIN,
        config=servers(
            time=TIME,
            missing={"command": "/nonexistent/mcp-server"},
            unset={"command": "x", "env": {"TOKEN": "${AGENT_HOST_TEST_UNSET_VAR}"}},
        ),
    )
    found = plugin_rows(host)
    assert found["mcp.time"]["state"] == "active"
    assert found["mcp.missing"]["state"] == "failed"
    assert found["mcp.missing"]["error"].startswith(
        'HostError: MCP server "missing" could not start: '
    )
    assert found["mcp.unset"]["state"] == "failed"
    assert found["mcp.unset"]["error"] == (
        'ConfigError: MCP server "unset": env.TOKEN: ${AGENT_HOST_TEST_UNSET_VAR} is not set'
    )
    assert "\n" not in found["mcp.missing"]["error"]


def test_one_server_can_be_blocked_by_name(tmp_path):
    host = Host(
        HostSettings(data_dir=tmp_path / "d"),
        selection=Selection(block=frozenset({"mcp.time"})),
        config=servers(time=TIME),
    )
    host.add_plugins([from_object("mcp", agent_host_mcp)])
    host.start()
    try:
        assert plugin_rows(host)["mcp.time"]["state"] == "blocked"
        assert host.warnings == []
    finally:
        host.close()


def project_host(project: Path, data: Path) -> Host:
    host = Host(HostSettings(data_dir=data, project_dir=project, config_trusted=False))
    host.add_plugins([from_object("mcp", agent_host_mcp)])
    return host.start()


def test_a_cloned_projects_server_starts_nothing_until_trusted(tmp_path):
    from agent_host_mcp import configured_servers
    from agent_host_mcp.trust import TrustStore, default_trust_path

    project = tmp_path / "cloned"
    project.mkdir()
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"time": TIME}}))
    host = project_host(project, tmp_path / "d1")
    assert (plugin_rows(host)["mcp.time"]["state"], plugin_rows(host)["mcp.time"]["error"]) == (
        "blocked",
        'not trusted: run "agent-host mcp trust time"',
    )
    host.close()

    settings = HostSettings(project_dir=project, config_trusted=False)
    [spec] = configured_servers(None, settings, os.environ).specs
    TrustStore(default_trust_path(os.environ)).trust(project, spec)
    host = project_host(project, tmp_path / "d2")
    assert plugin_rows(host)["mcp.time"]["state"] == "active"
    host.close()

    edited = {**TIME, "args": ["--local-timezone", "UTC"]}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"time": edited}}))
    host = project_host(project, tmp_path / "d3")
    assert plugin_rows(host)["mcp.time"]["state"] == "blocked"  # the definition changed
    host.close()


async def test_a_server_that_dies_turns_its_row_failed_and_calls_say_so(make_host):
    host = make_host(PLUGIN, config=servers(fault=FAULT))
    result = await turn_result(host, "fault__crash")
    assert result.is_error
    assert result.content.startswith('MCP server "fault" exited (status ')
    for _ in range(200):
        if plugin_rows(host)["mcp.fault"]["state"] == "failed":
            break
        await asyncio.sleep(0.02)
    assert plugin_rows(host)["mcp.fault"]["state"] == "failed"
    assert plugin_rows(host)["mcp.fault"]["error"] == result.content
    await host.aclose()


async def test_closing_the_host_leaves_no_server_process(make_host):
    host = make_host(PLUGIN, config=servers(time=TIME, fault=FAULT))
    mcp = host.services.get("mcp")
    plugins = [host.plugins.records[name].obj for name in ("mcp.time", "mcp.fault")]
    pids = [plugin.connection.pid for plugin in plugins]
    assert all(pid is not None and alive(pid) for pid in pids)
    await host.aclose()
    assert not any(alive(pid) for pid in pids)
    assert mcp.connections == set()  # asked to stop together, then awaited


def test_reloading_a_server_restarts_it(make_host):
    host = make_host(PLUGIN, config=servers(time=TIME))
    before = host.plugins.records["mcp.time"].obj.connection.pid
    assert host.reload("mcp.time").ok
    after = host.plugins.records["mcp.time"].obj.connection.pid
    assert after != before and alive(after) and not alive(before)


def test_without_servers_the_sdk_is_never_imported(tmp_path):
    code = (
        "import sys, agent_host_mcp\n"
        "from host.testing import build_host\n"
        "from pathlib import Path\n"
        f"host = build_host(('mcp', agent_host_mcp), data_dir=Path({str(tmp_path)!r}))\n"
        "assert [r['state'] for r in host.plugin_rows() if r['name'] == 'mcp'] == ['active']\n"
        "host.close()\n"
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_tool_catalog_names_each_tools_server(make_host):
    host = make_host(PLUGIN, config=servers(time=TIME))
    owners = {row["name"]: row["plugin"] for row in host.tool_rows()}
    assert owners["time__convert_time"] == "mcp.time"


def test_messages_are_never_written_for_a_failed_server(make_host, tmp_path):
    host = make_host(PLUGIN, config=servers(missing={"command": "/nonexistent/x"}))
    assert plugin_rows(host)["mcp.missing"]["state"] == "failed"
    assert not list((tmp_path / "data0").glob("**/*.jsonl"))


async def test_a_tool_with_a_bad_schema_is_skipped_with_a_line_naming_it(make_host, caplog):
    host = make_host(PLUGIN, config=servers(fault=FAULT))
    tools = plugin_rows(host)["mcp.fault"]["tools"]
    assert "fault__echo" in tools and "fault__bad_schema" not in tools
    assert 'MCP server "fault": tool "bad_schema" skipped: its inputSchema is not a valid' in (
        caplog.text
    )
    await host.aclose()


async def test_a_changed_tool_list_replaces_the_tools_live(make_host):
    host = make_host(PLUGIN, config=servers(fault=FAULT))
    assert "fault__added" not in plugin_rows(host)["mcp.fault"]["tools"]
    assert (await turn_result(host, "fault__grow")).content == "grown"
    for _ in range(200):
        if "fault__added" in plugin_rows(host)["mcp.fault"]["tools"]:
            break
        await asyncio.sleep(0.02)
    assert "fault__added" in {row["name"] for row in host.tool_rows()}
    assert (await turn_result(host, "fault__added")).content == "added here"
    await host.aclose()


async def test_media_reaches_the_model_as_placeholders_and_errors_as_errors(make_host):
    host = make_host(PLUGIN, config=servers(fault=FAULT))
    media = await turn_result(host, "fault__media")
    assert media.content.splitlines()[0] == "a picture"
    assert "[image/png, 100 bytes]" in media.content and "iVBOR" not in media.content
    failed = await turn_result(host, "fault__fail")
    assert (failed.is_error, failed.content) == (True, "Error executing tool fail")  # its words
    await host.aclose()


def test_tool_names_are_made_valid_deterministically():
    from agent_host_mcp.tools import NAME_LIMIT, host_name

    assert host_name("git", "git_status") == "git__git_status"
    assert host_name("my-server", "read.file/v2") == "my-server__read_file_v2"
    long = host_name("s", "t" * 200)
    assert len(long) == NAME_LIMIT and long == host_name("s", "t" * 200)
    assert long != host_name("s", "t" * 199)


async def slow_call_started(make_host, log: Path):
    """A host whose agent's turn is inside a minute-long MCP call (the server logged it)."""
    slow = {**FAULT, "args": [*FAULT["args"], "--cancel-log", str(log)]}
    host = make_host(PLUGIN, config=servers(fault=slow))
    model = host.services.models.resolve("scripted")
    model.script("user", call("fault__slow", seconds=60), say("never"))
    agent = await host.services.agents.create(label="user")
    agent.followup("wait a minute")
    for _ in range(500):
        if log.exists() and "started" in log.read_text():
            break
        await asyncio.sleep(0.02)
    return host, model, agent


async def test_interrupting_a_turn_cancels_the_call_on_the_server(make_host, tmp_path):
    log = tmp_path / "cancel.log"
    host, _model, agent = await slow_call_started(make_host, log)
    agent.interrupt()
    await agent.wait_idle()  # returns at once: the call does not run out its minute
    ends = [e.body for e in agent.session.events if type(e.body).__name__ == "TurnEnd"]
    assert [end.stop_reason for end in ends] == ["interrupted"]
    for _ in range(500):
        if "cancelled" in log.read_text():
            break
        await asyncio.sleep(0.02)
    assert log.read_text().split() == ["started", "cancelled"]
    await host.aclose()


async def test_a_failed_reload_of_a_server_keeps_the_running_one(make_host, tmp_path):
    """The second start fails: the reload leaves the running version, and its server, alone."""
    marker = tmp_path / "started-once"
    script = tmp_path / "once.sh"
    script.write_text(
        f'#!/bin/sh\nif [ -e "{marker}" ]; then echo "second start refused" >&2; exit 3; fi\n'
        f'touch "{marker}"\nexec "{TIME["command"]}"\n'
    )
    script.chmod(0o755)
    host = make_host(PLUGIN, config=servers(once={"command": str(script)}))
    assert plugin_rows(host)["mcp.once"]["state"] == "active"
    running = host.plugins.records["mcp.once"].obj
    outcome = host.reload("mcp.once")
    assert not outcome.ok and "second start refused" in outcome.error
    assert plugin_rows(host)["mcp.once"]["state"] == "active"
    assert host.plugins.records["mcp.once"].obj is running and alive(running.connection.pid)
    result = await turn_result(host, "once__get_current_time", timezone="UTC")
    assert not result.is_error, result.content
    await host.aclose()


async def test_two_hosts_in_one_process_keep_their_servers_apart(make_host):
    first = make_host(PLUGIN, config=servers(time=TIME))
    second = make_host(PLUGIN, config=servers(time=TIME))
    await first.aclose()
    result = await turn_result(second, "time__get_current_time", timezone="UTC")
    assert not result.is_error, result.content
    await second.aclose()


async def test_closing_the_host_mid_call_ends_the_turn_as_interrupted(make_host, tmp_path):
    from host.agents.tool_results import INTERRUPTED_TOOL_TEXT

    host, model, agent = await slow_call_started(make_host, tmp_path / "cancel.log")
    await host.aclose()
    tools = [e.body for e in agent.session.events if getattr(e.body, "role", None) == "tool"]
    assert [(t.content, t.is_error) for t in tools] == [(INTERRUPTED_TOOL_TEXT, True)]
    assert len(model.requests) == 1  # no model call after the tool was cut short


async def test_a_dead_servers_tools_answer_its_exit_line_not_unknown_tool(make_host):
    host = make_host(PLUGIN, config=servers(fault=FAULT))
    await turn_result(host, "fault__crash")
    line = 'MCP server "fault" exited (status 3): fatal: crashing on purpose'
    for _ in range(200):
        if plugin_rows(host)["mcp.fault"]["state"] == "failed":
            break
        await asyncio.sleep(0.02)
    assert plugin_rows(host)["mcp.fault"]["error"] == line

    for _ in range(2):
        result = await turn_result(host, "fault__echo", text="anyone?")
        assert (result.content, result.is_error) == (line, True)
    assert plugin_rows(host)["mcp.fault"]["state"] == "failed"


async def test_a_huge_result_is_cut_for_the_model_and_the_log(make_host):
    host = make_host(PLUGIN, config=servers(fault=FAULT))
    model = host.services.models.resolve("scripted")
    model.script("user", call("fault__big", chars=5_899_999), say("ok"))
    agent = await host.services.agents.create(label="user")
    agent.followup("go")
    await agent.wait_idle()

    [seen] = [m for m in model.requests[-1].messages if m.role == "tool"]
    note = "[result cut: 5,899,999 characters in all, the first 100,000 shown]"
    assert seen.content.endswith("\n" + note)
    assert len(seen.content) == 100_000 + 1 + len(note)
    assert seen.content[:100] == "0123456789" * 9 + "012345678\n"
    [logged] = [e.body for e in agent.session.events if getattr(e.body, "role", "") == "tool"]
    assert logged.content == seen.content


async def test_with_no_limit_a_huge_result_arrives_whole(make_host):
    config = {**servers(fault=FAULT), "tools": {"max_result_chars": 0}}
    host = make_host(PLUGIN, config=config)
    result = await turn_result(host, "fault__big", chars=5_899_999)
    assert len(result.content) == 5_899_999
    assert "[result cut" not in result.content


async def progress_turn(host, tool: str, **arguments):
    """One turn calling ``tool``, a stream listener on its agent: the agent, the tool message
    the model saw, and the ``ToolProgress`` events the listener got."""
    model = host.services.models.resolve("scripted")
    model.script("user", call(tool, **arguments), say("ok"))
    agent = await host.services.agents.create(label="user")
    seen: list[ToolProgress] = []
    agent.on_stream(lambda event: seen.append(event) if isinstance(event, ToolProgress) else None)
    agent.followup("go")
    await agent.wait_idle()
    [result] = [m for m in model.requests[-1].messages if m.role == "tool"]
    return agent, result, seen


async def test_progress_reaches_stream_listeners_at_a_bounded_rate_and_is_never_logged(
    make_host,
):
    host = make_host(PLUGIN, config=servers(fault=FAULT))
    agent, result, seen = await progress_turn(host, "fault__flood", count=3000)
    assert result.content == "flooded"
    assert seen and all(event.tool_call_id == result.tool_call_id for event in seen)
    assert all(event.message.startswith("step ") for event in seen)
    assert len(seen) < 300  # coalesced: at most one every 0.1 s, never one per notification
    assert not any("step 1 of" in repr(event.body) for event in agent.session.events)


async def test_progress_for_a_token_never_sent_is_dropped_quietly(make_host, caplog):
    host = make_host(PLUGIN, config=servers(fault=FAULT))
    caplog.clear()  # the start's line about the tool with a bad schema
    _, result, seen = await progress_turn(host, "fault__stray", count=500)
    assert (result.content, seen) == ("strayed", [])
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
