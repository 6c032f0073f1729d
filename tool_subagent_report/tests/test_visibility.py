"""Who sees ``report`` and its guidance: continuable in-process children only."""

from __future__ import annotations

from collections.abc import Callable

from host.agents import call, say
from host.naming import Owner
from host.subagents.types import ChildRequest
from host.testing import call_tool
from tests.subagents.report import ReportEnv, echo, tool_names
from tests.support import accepted

GUIDANCE = (
    "You are a background subagent. Deliver your result to the agent that started you with "
    "the report tool before you finish: finishing your turn does not send anything by itself. "
    "Report earlier too when a finding changes what that agent should do next. Reporting "
    "never ends your turn."
)


async def test_only_the_continuable_child_is_offered_report(env: ReportEnv) -> None:
    env.add_tool(echo)
    root = await env.root()
    env.model.script("root", say("root answer"))
    root.followup("hello")
    await root.wait_idle()
    one_shot = await env.subagents.start("spawn", ChildRequest("once", label="solo"), parent=root)
    await one_shot.result()
    child = await env.start(root)
    await env.settled(child.id, root)
    (root_request, *_) = env.model.requests_for("root")
    (solo_request,) = env.model.requests_for("solo")
    (child_request,) = env.model.requests_for("bg")
    assert "report" not in tool_names(root_request)
    assert "report" not in tool_names(solo_request)
    assert tool_names(child_request).count("report") == 1
    assert "echo" in tool_names(child_request)  # the global tools are still there


async def test_the_guidance_section_is_in_the_continuable_childs_prompt_only(
    env: ReportEnv,
) -> None:
    root = await env.root()
    env.model.script("root", say("root answer"))
    root.followup("hello")
    await root.wait_idle()
    one_shot = await env.subagents.start("spawn", ChildRequest("once", label="solo"), parent=root)
    await one_shot.result()
    child = await env.start(root)
    section = child.sections.own.get("subagent_report")
    assert section is not None and section.text == GUIDANCE
    await env.settled(child.id, root)
    (root_request, *_) = env.model.requests_for("root")
    (solo_request,) = env.model.requests_for("solo")
    (child_request,) = env.model.requests_for("bg")
    assert GUIDANCE in child_request.system_prompt
    assert GUIDANCE not in root_request.system_prompt
    assert GUIDANCE not in solo_request.system_prompt
    # the obligation the issue asks the guidance to state
    for clause in ("with the report tool before you finish", "Report earlier", "never ends"):
        assert clause in GUIDANCE


async def test_an_empty_allow_list_does_not_remove_report(env: ReportEnv) -> None:
    env.add_tool(echo)
    root = await env.root()
    env.model.script("bg", call("report", output="still here"), say("done"))
    child = await env.start(root, allow=[])
    assert [t.name for t in child.tools.tools()] == ["report"]
    await env.settled(child.id, root)
    (request, _) = env.model.requests_for("bg")
    assert tool_names(request) == ["report"]
    (result,) = await env.stored_messages(child.id, "tool")
    assert not result.is_error
    assert next(m.content for m in root.session.model_messages() if m.role == "user").endswith(
        "still here"
    )


async def test_an_allow_list_naming_other_tools_keeps_report_too(env: ReportEnv) -> None:
    env.add_tool(echo)
    root = await env.root()
    child = await env.start(root, allow=["echo"])
    assert sorted(t.name for t in child.tools.tools()) == ["echo", "report"]
    await env.settled(child.id, root)


async def test_without_the_package_no_child_has_report(
    make_env: Callable[..., ReportEnv],
) -> None:
    env = make_env(report=False)
    root = await env.root()
    env.model.script("bg", call("report", output="anyone?"), say("done"))
    child = await env.start(root)
    assert child.tools.get("report") is None
    assert "subagent_report" not in child.sections.own
    await env.settled(child.id, root)
    (request, _) = env.model.requests_for("bg")
    assert "report" not in tool_names(request)
    assert GUIDANCE not in request.system_prompt
    (result,) = await env.stored_messages(child.id, "tool")
    assert (result.is_error, result.content) == (True, 'unknown tool "report"')
    assert len(env.subagents.setup) == 0


async def test_installing_report_gives_nobody_send_message(env: ReportEnv) -> None:
    root = await env.root()
    env.model.script("root", say("ok"))
    root.followup("hi")
    await root.wait_idle()
    child = await env.start(root)
    await env.settled(child.id, root)
    assert "send_message" not in env.host.tools
    assert env.host.tools.get("list_agents") is None
    assert child.tools.get("send_message") is None and root.tools.get("send_message") is None
    for request in env.model.requests:
        assert "send_message" not in tool_names(request)
        assert "interrupt_agent" not in tool_names(request)


async def test_the_report_tool_is_child_scoped_not_global(env: ReportEnv) -> None:
    root = await env.root()
    first = await env.start(root, label="a")
    second = await env.start(root, label="b")
    # each child has its own scoped registration; the global registry has none
    assert "report" in first.tools.own and "report" in second.tools.own
    assert first.tools.own.owner("report") == Owner("subagent_report")
    assert env.host.tools.get("report") is None
    assert root.tools.get("report") is None
    await env.settled(first.id)
    await env.settled(second.id, root)


async def test_a_call_without_an_agent_is_refused(env: ReportEnv) -> None:
    root = await env.root()
    child = await env.start(root)
    result = await env.run_report(child, None, "nobody")
    assert (result.is_error, result.text) == (True, "report requires a calling agent")
    await env.settled(child.id, root)
    # and as a global tool call the host does not know report at all
    missing = await call_tool(env.host, "report", {"output": "x"}, agent=root)
    assert (missing.is_error, missing.text) == (True, 'unknown tool "report"')
    assert [(a.source or {}).get("kind") for a in accepted(root)] == ["subagent-settled"]
