"""HMR disposal of each plugin, and the installed distribution seen through the CLI."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from host.agents import say
from host.plugins.discovery import discover
from host.testing import build_host, call_tool
from tests.cli.support import agent_host
from tests.subagents.control import Ctl

ROOT_TOOLS = ["send_message", "interrupt_agent"]
LIST_TOOLS = ["list_agents"]
AGENT_HOST = Path(sys.executable).parent / "agent-host"


def tool_names(ctl: Ctl) -> list[str]:
    return [row["name"] for row in ctl.host.tool_rows()]


def owners(ctl: Ctl) -> dict[str, str]:
    return {row["name"]: row["plugin"] for row in ctl.host.tool_rows()}


@pytest.mark.parametrize(
    ("plugin", "mine", "others"),
    [
        ("subagent_control", ROOT_TOOLS, [*LIST_TOOLS, "subagent"]),
        ("list_agents", LIST_TOOLS, [*ROOT_TOOLS, "subagent"]),
    ],
)
async def test_block_and_unblock_dispose_exactly_the_plugins_tools(
    ctl: Ctl, plugin: str, mine: list[str], others: list[str]
) -> None:
    parent = await ctl.root()
    before = tool_names(ctl)
    assert owners(ctl) == {
        "ask_user": "approvals",
        "send_message": "subagent_control",
        "interrupt_agent": "subagent_control",
        "list_agents": "list_agents",
        "subagent": "subagent",
    }
    ctl.host.plugins.block(plugin)
    record = ctl.host.plugins.records[plugin]
    assert (record.state, record.tools) == ("blocked", [])
    assert tool_names(ctl) == [name for name in before if name not in mine]
    for name in mine:
        assert parent.tools.get(name) is None  # a live agent no longer sees it
        result = await ctl.call(name, {}, parent)
        assert result.text == f'unknown tool "{name}"'
    for name in others:
        assert ctl.host.tools.get(name) is not None
    ctl.host.plugins.unblock(plugin)
    assert (record.state, record.tools) == ("active", mine)
    after = tool_names(ctl)
    assert sorted(after) == sorted(before)
    for name in mine:
        assert after.count(name) == 1
        assert parent.tools.get(name) is not None
    # and the tools work again
    result = await ctl.call("list_agents", {}, parent)
    assert result.text == "(no subagents)"
    result = await ctl.call("interrupt_agent", {"agent_id": "sub_missing"}, parent)
    assert result.text == "interrupt requested for agent sub_missing"


@pytest.mark.parametrize("plugin", ["subagent_control", "list_agents"])
async def test_reload_replaces_the_tools_once(ctl: Ctl, plugin: str) -> None:
    parent = await ctl.root()
    before = sorted(tool_names(ctl))
    for _ in range(2):
        outcome = ctl.host.reload(plugin)
        assert outcome.ok, outcome.error
        assert outcome.state == "active"
        assert sorted(tool_names(ctl)) == before
    ctl.model.script("bg", say("done"))
    child_id = await ctl.start(parent, "bg")
    await ctl.settled(child_id, parent)
    result = await ctl.call("list_agents", {}, parent)
    assert result.text == f"{child_id} [ready] — bg"


async def test_losing_the_agents_service_takes_only_the_list_plugin_down(ctl: Ctl) -> None:
    ctl.host.plugins.block("agents")
    records = ctl.host.plugins.records
    assert records["list_agents"].state == "inactive"
    assert records["list_agents"].missing(set(ctl.services.names())) == ["agents"]
    assert records["subagent_control"].state == "active"
    assert sorted(tool_names(ctl)) == sorted([*ROOT_TOOLS, "subagent"])
    ctl.host.plugins.unblock("agents")
    assert records["list_agents"].state == "active"
    assert tool_names(ctl).count("list_agents") == 1


async def test_the_distribution_needs_only_the_host() -> None:
    dist = metadata.distribution("agent-host-tool-subagent-control")
    assert dist.requires == ["agent-host-core"]
    points = {ep.name: ep.value for ep in dist.entry_points if ep.group == "agent_host.plugins"}
    assert points == {
        "subagent_control": "tool_subagent_control.root",
        "list_agents": "tool_subagent_control.listing",
    }
    from tool_subagent_control import listing, root

    assert root.requires == ("subagents",)
    assert listing.requires == ("subagents", "agents")


def cli(tmp_path: Path, *args: str, environ: dict[str, str] | None = None) -> Any:
    assert AGENT_HOST.exists(), (
        f"{AGENT_HOST} is not installed (pip install -r requirements-dev.txt)"
    )
    done = agent_host(*args, cwd=tmp_path, **(environ or {}))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def by_name(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {row["name"]: row for row in rows}


def test_cli_shows_both_plugins_active(tmp_path: Path) -> None:
    rows = by_name(cli(tmp_path, "plugins", "--json"))
    control, listed = rows["subagent_control"], rows["list_agents"]
    assert (control["state"], control["missing"], control["error"]) == ("active", [], None)
    assert (listed["state"], listed["missing"], listed["error"]) == ("active", [], None)
    assert control["distribution"] == listed["distribution"] == "agent-host-tool-subagent-control"
    assert control["requires"] == ["subagents"]
    assert listed["requires"] == ["subagents", "agents"]
    assert control["tools"] == ROOT_TOOLS
    assert listed["tools"] == LIST_TOOLS
    assert control["builtin"] is False and listed["builtin"] is False
    tools = [row["name"] for row in cli(tmp_path, "tools", "--json")]
    for name in (*ROOT_TOOLS, *LIST_TOOLS):
        assert tools.count(name) == 1


@pytest.mark.parametrize(
    ("args", "environ"),
    [
        (("--no-plugin", "agents"), {}),
        ((), {"AGENT_HOST_DISABLE_PLUGINS": "agents"}),
    ],
)
def test_cli_without_agents_keeps_the_root_plugin(
    tmp_path: Path, args: tuple[str, ...], environ: dict[str, str]
) -> None:
    rows = by_name(cli(tmp_path, *args, "plugins", "--json", environ=environ))
    assert rows["agents"]["state"] == "blocked"
    listed, control = rows["list_agents"], rows["subagent_control"]
    assert (listed["state"], listed["missing"], listed["tools"]) == ("inactive", ["agents"], [])
    assert (control["state"], control["missing"], control["tools"]) == ("active", [], ROOT_TOOLS)
    tools = by_name(cli(tmp_path, *args, "tools", "--json", environ=environ))
    assert "list_agents" not in tools
    for name in ROOT_TOOLS:
        assert tools[name]["plugin"] == "subagent_control"
    assert set(tools["send_message"]["parameters"]["properties"]) == {"subagent_id", "message"}


def test_cli_without_the_report_package_keeps_both(tmp_path: Path) -> None:
    rows = by_name(cli(tmp_path, "--no-plugin", "subagent_report", "plugins", "--json"))
    assert rows["subagent_report"]["state"] == "blocked"
    assert rows["subagent_control"]["state"] == "active"
    assert rows["list_agents"]["state"] == "active"


@pytest.fixture
def restore_control_modules() -> Iterator[None]:
    """Put the original ``tool_subagent_control`` modules back after an in-process reload."""
    saved = {
        name: module
        for name, module in sys.modules.items()
        if name == "tool_subagent_control" or name.startswith("tool_subagent_control.")
    }
    yield
    for name in [n for n in sys.modules if n.startswith("tool_subagent_control")]:
        del sys.modules[name]
    sys.modules.update(saved)


@pytest.mark.parametrize(
    ("plugin", "mine"), [("subagent_control", ROOT_TOOLS), ("list_agents", LIST_TOOLS)]
)
@pytest.mark.usefixtures("restore_control_modules")
async def test_reloading_the_installed_plugin_reimports_and_replaces_only_its_tools(
    tmp_path: Path, plugin: str, mine: list[str]
) -> None:
    import agent_host_subagent

    installed = [c for c in discover() if c.name in ("subagent_control", "list_agents")]
    assert sorted(c.name for c in installed) == ["list_agents", "subagent_control"]
    host = build_host(*installed, ("subagent", agent_host_subagent), data_dir=tmp_path / "d")
    try:
        parent = await host.services.agents.create(label="root")
        old = {name: host.tools.get(name) for name in (*ROOT_TOOLS, *LIST_TOOLS)}
        outcome = host.reload(plugin)
        assert outcome.ok, outcome.error
        names = [row["name"] for row in host.tool_rows()]
        for name in (*ROOT_TOOLS, *LIST_TOOLS, "subagent"):
            assert names.count(name) == 1, names
        for name, tool in old.items():
            if name in mine:
                assert host.tools.get(name) is not tool  # the new code's tool
            else:
                assert host.tools.get(name) is tool  # the other plugin is untouched
        assert host.plugins.records[plugin].tools == mine
        result = await call_tool(host, "list_agents", {}, agent=parent)
        assert result.text == "(no subagents)"
        result = await call_tool(
            host, "send_message", {"subagent_id": "nope", "message": "x"}, agent=parent
        )
        assert result.text == 'message was not delivered: subagent "nope" is unavailable'
    finally:
        await host.aclose()
