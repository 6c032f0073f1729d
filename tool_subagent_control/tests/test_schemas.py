"""Schemas, the model's manual, single registration, agentless calls and malformed arguments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from host.agents import say
from tests.subagents.control import TWO_DELEGATION_TOOLS, Ctl

CONTROL_TOOLS = ("send_message", "interrupt_agent", "list_agents")


def spec(ctl: Ctl, name: str) -> Any:
    tool = ctl.host.tools.get(name)
    assert tool is not None, name
    return tool


def test_exact_parameter_schemas(ctl: Ctl) -> None:
    assert spec(ctl, "send_message").parameters == {
        "type": "object",
        "properties": {
            "subagent_id": {"type": "string", "description": "The id of your direct subagent."},
            "message": {"type": "string", "description": "What the subagent should do next."},
        },
        "required": ["subagent_id", "message"],
        "additionalProperties": False,
    }
    interrupt = spec(ctl, "interrupt_agent").parameters
    assert set(interrupt["properties"]) == {"agent_id"}
    assert interrupt["properties"]["agent_id"]["type"] == "string"
    assert interrupt["required"] == ["agent_id"]
    assert interrupt["additionalProperties"] is False
    listed = spec(ctl, "list_agents").parameters
    assert set(listed["properties"]) == {"scope"}
    assert listed["properties"]["scope"]["type"] == "string"
    assert listed["properties"]["scope"]["enum"] == ["children", "descendants"]
    assert "required" not in listed  # scope is optional
    assert listed["additionalProperties"] is False
    # stable across calls (one declaration per tool)
    for name in CONTROL_TOOLS:
        assert spec(ctl, name).parameters == spec(ctl, name).parameters


def test_descriptions_are_the_models_manual(ctl: Ctl) -> None:
    send = spec(ctl, "send_message").description
    for phrase in (
        "becomes the subagent's next turn",
        "waits until its current turn ends",
        "cannot redirect work already under way",
        "returns no answer",
        "read its transcript",
        "wait for its report",
        "A failed call means the message was not delivered",
    ):
        assert phrase in send, phrase
    interrupt = spec(ctl, "interrupt_agent").description
    for phrase in (
        "Only the current turn stops",
        "queued stay parked until a later send_message",
        "descendants keep running",
        "returns once the stop is accepted, before the subagent has fully stopped",
        "has settled is accepted and does nothing",
    ):
        assert phrase in interrupt, phrase
    listed = spec(ctl, "list_agents").description
    for phrase in (
        "to recall their ids and labels",
        "Do not poll",
        "you are told when a subagent finishes",
        "ready (stored, not terminal: send_message resumes it)",
        "Only depth-1 entries accept send_message",
        "deeper ones are interrupt_agent candidates",
        "The list is a snapshot",
    ):
        assert phrase in listed, phrase


async def test_registered_once_with_two_delegation_tools(tmp_path: Path) -> None:
    ctl = Ctl(tmp_path / "data", config=TWO_DELEGATION_TOOLS)
    try:
        names = [row["name"] for row in ctl.host.tool_rows()]
        for name in CONTROL_TOOLS:
            assert names.count(name) == 1, name
        assert {"subagent", "subagent_fork"} <= set(names)
        records = ctl.host.plugins.records
        assert records["subagent_control"].tools == ["send_message", "interrupt_agent"]
        assert records["list_agents"].tools == ["list_agents"]
        assert records["subagent"].tools == ["subagent", "subagent_fork"]
        assert all(r.state == "active" for r in records.values()), ctl.host.plugin_rows()
        # what a parent's model is offered: each control tool exactly once
        parent = await ctl.root()
        ctl.model.script("root", say("ok"))
        parent.followup("hi")
        await parent.wait_idle()
        (request,) = ctl.model.requests_for("root")
        offered = [t.name for t in request.tools]
        for name in (*CONTROL_TOOLS, "subagent", "subagent_fork"):
            assert offered.count(name) == 1, offered
    finally:
        await ctl.close()


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("send_message", {"subagent_id": "sub_x", "message": "hi"}),
        ("interrupt_agent", {"agent_id": "sub_x"}),
        ("list_agents", {}),
        ("list_agents", {"scope": "descendants"}),
        ("subagent", {"description": "a task", "prompt": "do it"}),
        ("subagent", {"description": "a task", "prompt": "do it", "run_in_background": False}),
    ],
)
async def test_every_tool_requires_a_calling_agent(ctl: Ctl, name: str, args: Any) -> None:
    before = ctl.session_files()
    result = await ctl.call(name, args, None)
    assert result.is_error
    assert result.text == f"{name} requires a calling agent"
    assert result.structured is None
    assert ctl.session_files() == before


@pytest.mark.parametrize(
    ("name", "args", "problem"),
    [
        ("send_message", {"subagent_id": "sub_x"}, "message: required"),
        ("send_message", {"message": "hi"}, "subagent_id: required"),
        ("send_message", {"subagent_id": 7, "message": "hi"}, "subagent_id: expected string"),
        ("send_message", {"subagent_id": "s", "message": ["hi"]}, "message: expected string"),
        ("send_message", {"subagent_id": "s", "message": "hi", "x": 1}, "x: unknown key"),
        ("send_message", "not an object", "arguments: expected object"),
        ("interrupt_agent", {}, "agent_id: required"),
        ("interrupt_agent", {"agent_id": None}, "agent_id: expected string"),
        ("list_agents", {"scope": "everything"}, "scope: must be one of"),
        ("list_agents", {"scope": 1}, "scope: expected string"),
    ],
)
async def test_malformed_arguments_are_error_results(
    ctl: Ctl, name: str, args: Any, problem: str
) -> None:
    parent = await ctl.root()
    ctl.model.script("bg", say("done"))
    child_id = await ctl.start(parent, "bg")
    await ctl.settled(child_id, parent)
    requests = len(ctl.model.requests)
    before = ctl.session_files()
    result = await ctl.call(name, args, parent)
    assert result.is_error
    assert result.text.startswith(f"invalid arguments for {name}: ")
    assert problem in result.text
    assert ctl.session_files() == before  # nothing delivered, resumed or written
    assert ctl.agents.get(child_id) is None
    assert len(ctl.model.requests) == requests
