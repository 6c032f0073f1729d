"""The model-facing contract of ``report``: description, schema, config, bad input."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import tool_subagent_report.plugin as report_plugin

from host.agents import call, say
from tests.scenarios import user_messages
from tests.subagents.report import FINISHED, ReportEnv, accepted_text, frame
from tests.support import accepted

DESCRIPTION = (
    "Send selected content to the agent that started you (your direct parent, no one else). "
    "Deliver your result with report before you finish; report earlier when a finding changes "
    "what your parent should do next. You may call it more than once. Reporting never ends "
    "your turn. A failed call may still have arrived, so do not blindly repeat it."
)

SCHEMA = {
    "type": "object",
    "properties": {
        "output": {"type": "string", "description": "The content your parent should receive."}
    },
    "required": ["output"],
    "additionalProperties": False,
}


async def test_description_and_schema_are_pinned(env: ReportEnv) -> None:
    root = await env.root()
    child = await env.start(root)
    report = child.tools.get("report")
    assert report is not None
    assert report.description == DESCRIPTION
    assert report.parameters == SCHEMA
    # docs/tool-catalog.md: every clause of the description is there
    for clause in (
        "Deliver your result with report before you finish",
        "report earlier when a finding changes what your parent should do next",
        "more than once",
        "your direct parent, no one else",
        "Reporting never ends your turn",
        "A failed call may still have arrived, so do not blindly repeat it",
    ):
        assert clause in report.description
    # the schema is stable across calls and children, and is what the model is shown
    sibling = await env.start(root, label="sibling")
    assert sibling.tools.get("report").parameters == report.parameters
    await env.settled(sibling.id)
    await env.settled(child.id, root)
    (request,) = env.model.requests_for("bg")
    (spec,) = [s for s in request.tools if s.name == "report"]
    assert (spec.description, spec.parameters) == (DESCRIPTION, SCHEMA)


async def test_activation_registers_no_global_tool_or_section(env: ReportEnv) -> None:
    row = env.plugin_row()
    assert (row["state"], row["tools"], row["services"]) == ("active", [], [])
    assert row["requires"] == ["subagents"]
    assert "report" not in env.host.tools
    assert all(
        owner != 'plugin "subagent_report"'
        for owner in map(env.host.prompt_sections.owner, env.host.prompt_sections)
    )
    assert len(env.subagents.setup) == 1  # exactly one setup contribution


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({}, "output"),
        ({"output": 5}, "output"),
        ({"output": None}, "output"),
        ({"output": "x", "delivery": "quiet"}, "delivery"),
        ({"output": "x", "recipient": "someone"}, "recipient"),
    ],
)
async def test_bad_arguments_are_clear_errors_and_deliver_nothing(
    env: ReportEnv, args: dict[str, object], problem: str
) -> None:
    root = await env.root()
    env.model.script("bg", call("report", **args), say("done"))
    child = await env.start(root)
    await env.settled(child.id, root)
    (result,) = await env.stored_messages(child.id, "tool")
    assert result.is_error
    assert result.content.startswith("invalid arguments for report: ")
    assert problem in result.content
    # only the settlement notice reached the parent
    assert [(a.source or {}).get("kind") for a in accepted(root)] == ["subagent-settled"]


async def test_oversized_output_is_refused_and_nothing_is_delivered(
    make_env: Callable[..., ReportEnv],
) -> None:
    env = make_env(config={"plugins": {"subagent_report": {"max_output_chars": 10}}})
    root = await env.root()
    env.model.script("bg", call("report", output="x" * 11), call("report", output="y" * 10))
    env.model.script("bg", say("done"))
    child = await env.start(root)
    await env.settled(child.id, root)
    refused, fitting = await env.stored_messages(child.id, "tool")
    assert refused.is_error and refused.structured is None
    assert refused.content == (
        "report output is 11 characters, more than the limit of 10; report was not delivered"
    )
    # the limit is inclusive: exactly max_output_chars characters are delivered
    assert not fitting.is_error
    texts = [m.content for m in user_messages(root)]
    assert texts[0] == frame(child.id, "y" * 10)
    assert FINISHED in texts[1] and len(texts) == 2
    assert not any("x" * 11 in t for t in texts)


def test_the_default_limit_is_documented() -> None:
    assert report_plugin.Config().max_output_chars == report_plugin.MAX_OUTPUT_CHARS == 100_000
    assert report_plugin.Config().delivery == "next-step"
    assert "max_output_chars" in (report_plugin.Config.__doc__ or "")


@pytest.mark.parametrize(
    ("table", "key"),
    [
        ({"delivery": "loud"}, "delivery"),
        ({"delivery": 1}, "delivery"),
        ({"max_output_chars": "5"}, "max_output_chars"),
        ({"max_output_chars": 0}, "max_output_chars"),
        ({"max_output_chars": -1}, "max_output_chars"),
        ({"mode": "quiet"}, "mode"),
    ],
)
async def test_bad_config_fails_the_plugin_with_one_line_naming_the_key(
    make_env: Callable[..., ReportEnv], table: dict[str, object], key: str
) -> None:
    env = make_env(config={"plugins": {"subagent_report": table}})
    row = env.plugin_row()
    assert row["state"] == "failed"
    error = row["error"]
    assert "\n" not in error
    assert "[plugins.subagent_report]" in error and key in error
    # nothing of the plugin is installed: no contribution, so no child gets report
    assert len(env.subagents.setup) == 0
    root = await env.root()
    child = await env.start(root)
    assert child.tools.get("report") is None
    assert "subagent_report" not in child.sections.own
    await env.settled(child.id, root)


async def test_delivery_loud_error_text(make_env: Callable[..., ReportEnv]) -> None:
    env = make_env(config={"plugins": {"subagent_report": {"delivery": "loud"}}})
    assert env.plugin_row()["error"] == (
        "ConfigError: [plugins.subagent_report] delivery: must be one of 'next-step', 'quiet'"
    )


async def test_success_text_and_structured_message_id(env: ReportEnv) -> None:
    root = await env.root()
    env.model.script("bg", call("report", output="the answer is 42"), say("done"))
    child = await env.start(root)
    await env.settled(child.id, root)
    (result,) = await env.stored_messages(child.id, "tool")
    report_message = user_messages(root)[0]
    assert not result.is_error
    assert result.content == accepted_text(report_message.message_id)
    assert result.structured == {"message_id": report_message.message_id}
