"""The delegation tool against a real host: background and foreground children, config, depth."""

from __future__ import annotations

import agent_host_subagent
import pytest

from host.agents.scripted import calls, say, tool_call
from host.app import Host
from host.sessions.model import MessageEvent, SessionHeader
from host.testing import build_host, call_tool


@pytest.fixture
def h(make_harness):
    return make_harness(("subagent", agent_host_subagent))


@pytest.fixture
def host(h) -> Host:
    return h.host


def test_schema_and_description(host):
    tool = host.tools.get("subagent")
    assert tool.parameters == {
        "type": "object",
        "properties": {
            "description": {
                "type": "string",
                "description": "A short label for the task (3-7 words), shown in listings.",
            },
            "prompt": {"type": "string", "description": "The complete task for the subagent."},
            "run_in_background": {
                "type": ["boolean", "null"],
                "description": "Run in the background (default) or wait for the answer.",
            },
            "subagent_type": {
                "type": ["string", "null"],
                "description": "The profile to start the subagent from, one of those listed in "
                "the tool description; omit it for general-purpose (a plain subagent with your "
                "tools if there is no such profile).",
            },
        },
        "required": ["description", "prompt"],
        "additionalProperties": False,
    }
    assert "In the background (the default here) it returns at once" in tool.describe()


async def test_background_start_returns_the_id_and_the_parent_hears_the_end(host, h):
    h.model.script("scan the logs", say("nothing unusual"))
    root = await host.services.agents.create(label="root")
    result = await call_tool(
        host, "subagent", {"description": "scan the logs", "prompt": "Scan them."}, agent=root
    )
    child_id = result.structured["subagent_id"]
    assert (result.text, result.is_error) == (f"started subagent {child_id}", False)
    header = host.services.sessions.get(child_id).header
    assert (header.origin, header.parent_session, header.delegation_depth) == (
        "subagent",
        root.id,
        1,
    )

    await h.settled(child_id, root)
    notices = [
        e.body.content
        for e in root.session.events
        if isinstance(e.body, MessageEvent)
        and (e.body.source or {}).get("kind") == "subagent-settled"
    ]
    assert notices == [
        f"Background subagent {child_id} finished and will do no further work unless you send it "
        "more.\n\nIts closing message:\nnothing unusual"
    ]


async def test_foreground_returns_the_final_answer(host, h):
    h.model.script("add up", say("42"))
    root = await host.services.agents.create(label="root")
    args = {"description": "add up", "prompt": "6 * 7?", "run_in_background": False}
    result = await call_tool(host, "subagent", args, agent=root)
    assert (result.text, result.is_error) == ("42", False)
    child_id = result.structured["subagent_id"]
    assert result.structured == {
        "subagent_id": child_id,
        "stop_reason": "completed",
        "subagent_type": "general-purpose",  # no subagent_type: the default profile (docs/profiles.md)
    }
    header = (await host.services.session_persistence.inspect(child_id)).header  # root's child
    assert (header.origin, header.parent_session) == ("subagent", root.id)


async def test_foreground_failure_shows_the_stop_reason_and_partial_output(host, h):
    h.model.script(
        "flaky",
        calls(tool_call("missing_tool"), text="halfway there"),
        RuntimeError("model went away"),
    )
    root = await host.services.agents.create(label="root")
    args = {"description": "flaky", "prompt": "Try.", "run_in_background": False}
    result = await call_tool(host, "subagent", args, agent=root)
    child_id = result.structured["subagent_id"]
    assert result.is_error
    assert result.text == (
        f"subagent {child_id} stopped (error) before it finished\nPartial output:\nhalfway there"
    )


async def test_configured_instances_and_one_shot_mode(tmp_path):
    config = {
        "plugins": {
            "subagent": {
                "tools": [
                    {"name": "subagent", "provider": "spawn"},
                    {"name": "subagent_fork", "provider": "fork"},
                    {"name": "ask", "provider": "spawn", "mode": "one-shot"},
                ]
            }
        }
    }
    host = build_host(("subagent", agent_host_subagent), data_dir=tmp_path / "d", config=config)
    try:
        assert [n for n in host.tools if n in ("subagent", "subagent_fork", "ask")] == [
            "subagent",
            "subagent_fork",
            "ask",
        ]
        root = await host.services.agents.create(label="root")
        args = {"description": "x", "prompt": "y", "run_in_background": True}
        refused = await call_tool(host, "ask", args, agent=root)
        assert (refused.is_error, refused.text) == (
            True,
            "ask runs subagents in the foreground only",
        )
        assert host.services.sessions.list() == [root.session.header]
    finally:
        await host.aclose()


async def test_not_offered_at_the_depth_limit_and_refused_beyond_it(host, h):
    model = h.model
    model.script("deep", say("ok"))
    model.script("shallow", say("ok"))
    deep = await host.services.agents.create(
        SessionHeader(id="deep", delegation_depth=3), label="deep"
    )
    shallow = await host.services.agents.create(label="shallow")
    for agent in (deep, shallow):
        agent.followup("hello")
        await agent.wait_idle()
    offered = {r.label: [t.name for t in r.tools] for r in model.requests}
    assert "subagent" not in offered["deep"]
    assert "subagent" in offered["shallow"]

    refused = await call_tool(host, "subagent", {"description": "d", "prompt": "p"}, agent=deep)
    assert refused.is_error
    assert refused.text == (
        'subagent failed: cannot start a subagent at delegation depth 4: provider "spawn" allows '
        "at most depth 3"
    )


async def test_bad_arguments_start_nothing(host):
    root = await host.services.agents.create(label="root")
    result = await call_tool(host, "subagent", {"description": 5}, agent=root)
    assert result.is_error
    assert result.text == (
        "invalid arguments for subagent: prompt: required; description: expected string, got integer"
    )
    assert [h.id for h in host.services.sessions.list()] == [root.id]
