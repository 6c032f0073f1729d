"""The delegation tool with profiles: what the child model receives, resume, errors, config."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import agent_host_subagent
import attrs
import pytest
import tool_subagent_report.plugin as report_plugin

from host import hookimpl
from host.agents.scripted import ScriptedModel, say
from host.app import Host
from host.profiles.sources import CLOSINGS, GENERAL_PURPOSE_PERSONA
from host.sessions.model import SubagentDescriptorEvent
from host.testing import build_host, call_tool
from tests.profiles.support import profile_host, seen, settle, write
from tests.support import named_tool, scripted


class Tools:
    """Three plain global tools to filter."""

    @staticmethod
    @hookimpl
    def register_tools(register):
        for name in ("read_file", "grep", "shell"):
            register(named_tool(name))


@attrs.define
class Files:
    user: Path
    project: Path


def make(tmp_path: Path, config: Mapping[str, Any] | None = None) -> tuple[Host, Files]:
    """A ``profile_host`` with ``Tools``, and its user and project profile directories."""
    host, dirs = profile_host(tmp_path, ("tools", Tools), config=config)
    return host, Files(dirs.user, dirs.project_agents)


@pytest.fixture
async def env(tmp_path: Path):
    host, files = make(tmp_path)
    yield host, files
    await host.aclose()


async def test_a_child_from_a_profile_gets_exactly_its_tools_and_persona(env):
    host, files = env
    write(
        files.user,
        "rev.md",
        "code-reviewer",
        persona="You review diffs and never edit.",
        tools="read_file, grep, shell, subagent",
        disallowed_tools="grep",
    )
    model = scripted(host)
    model.script("review", say("looks fine"))
    model.script("plain", say("ok"))
    root = await host.services.agents.create(label="root")
    args = {"description": "review", "prompt": "Review it.", "subagent_type": "Code Reviewer"}
    result = await call_tool(host, "subagent", args, agent=root)
    assert not result.is_error, result.text
    child_id = result.structured["subagent_id"]
    assert result.structured == {"subagent_id": child_id, "subagent_type": "code-reviewer"}
    await settle(host, child_id, root)
    tools, prompt = seen(model, "review")
    assert tools == ["subagent", "read_file", "shell"]
    assert "You review diffs and never edit." in prompt

    # Without subagent_type the child is general-purpose (docs/profiles.md): all the parent's tools,
    # as a plain child had, and the general-purpose persona instead of none.
    plain = await call_tool(host, "subagent", {"description": "plain", "prompt": "p"}, agent=root)
    assert plain.structured["subagent_type"] == "general-purpose"
    await settle(host, plain.structured["subagent_id"], root)
    tools, prompt = seen(model, "plain")
    assert tools[:5] == ["ask_user", "subagent", "read_file", "grep", "shell"]
    assert "You review diffs" not in prompt
    assert "complete, concise final report" in prompt


async def test_omitting_subagent_type_uses_the_general_purpose_in_effect(env):
    host, files = env
    own = {"persona": "You are the house generalist.", "tools": "[grep]"}
    write(files.user, "gp.md", "general-purpose", **own)
    model = scripted(host)
    model.script("any", say("done"))
    root = await host.services.agents.create(label="root")
    args = {"description": "any", "prompt": "Do it.", "run_in_background": False}
    result = await call_tool(host, "subagent", args, agent=root)
    assert (result.text, result.structured["subagent_type"]) == ("done", "general-purpose")
    tools, prompt = seen(model, "any")
    assert tools == ["grep"]  # the user's general-purpose overrides the built-in one
    assert "You are the house generalist." in prompt


def test_the_default_profile_is_general_purpose_when_there_is_one():
    from host.profiles.model import ProfileSet
    from host.profiles.sources import GENERAL_PURPOSE

    assert ProfileSet((GENERAL_PURPOSE,)).default() == GENERAL_PURPOSE
    assert ProfileSet().default() is None  # then an omitted subagent_type means a plain child


async def test_general_purpose_is_built_in(env):
    host, _ = env
    model = scripted(host)
    model.script("gp", say("done"))
    root = await host.services.agents.create(label="root")
    args = {
        "description": "gp",
        "prompt": "Do it.",
        "subagent_type": "general_purpose",
        "run_in_background": False,
    }
    result = await call_tool(host, "subagent", args, agent=root)
    assert (result.text, result.structured["subagent_type"]) == ("done", "general-purpose")
    tools, prompt = seen(model, "gp")
    assert tools == ["ask_user", "subagent", "read_file", "grep", "shell"]
    assert "complete, concise final report" in prompt


async def test_cold_resume_after_the_file_is_deleted_keeps_the_profile_it_started_with(tmp_path):
    host, files = make(tmp_path)
    path = write(
        files.project,
        "r.md",
        "reader",
        persona="You only read.",
        tools="[read_file]",
        max_steps="3",
        mcp_servers="[]",
    )
    scripted(host).script("read", say("read it"))
    root = await host.services.agents.create(label="root")
    root_id = root.id
    args = {"description": "read", "prompt": "Read.", "subagent_type": "reader"}
    result = await call_tool(host, "subagent", args, agent=root)
    child_id = result.structured["subagent_id"]
    await settle(host, child_id, root)
    stored = await host.services.session_persistence.inspect(child_id)
    (descriptor,) = [e.body for e in stored.events if isinstance(e.body, SubagentDescriptorEvent)]
    await host.aclose()

    path.unlink()
    second, _ = make(tmp_path)
    try:
        assert "reader" not in second.profiles.load().names()
        model = scripted(second)
        model.script("read", say("again"))
        root2 = await second.services.agents.resume(root_id, label="root")
        await second.services.subagents.followup(
            root2, child_id, "Read more.", source={"kind": "coordinator"}
        )
        child = second.services.agents.get(child_id)
        assert child is not None and child.max_steps == 3  # the profile's, not the default
        await settle(second, child_id, root2)
        tools, prompt = seen(model, "read")
        assert tools[:1] == ["read_file"] and "grep" not in tools and "shell" not in tools
        assert "You only read." in prompt
    finally:
        await second.aclose()
    assert descriptor.descriptor == {
        "version": 2,
        "mode": "continuable",
        "provider": "spawn",
        "label": "read",
        "persona": "You only read.",
        "tool_filter": {"allow": ["read_file"], "sub_plugins": [{"parent": "mcp", "names": []}]},
        "max_steps": 3,
        "profile": "reader",
        "mcp_servers": [],
    }


async def test_a_changed_file_affects_the_next_start_not_an_existing_child(env):
    host, files = env
    write(files.user, "w.md", "writer", persona="Version one.")
    model = scripted(host)
    model.script("first", say("one"), say("one again"))
    model.script("second", say("two"))
    root = await host.services.agents.create(label="root")
    first = await call_tool(
        host,
        "subagent",
        {"description": "first", "prompt": "p", "subagent_type": "writer"},
        agent=root,
    )
    await settle(host, first.structured["subagent_id"], root)
    write(files.user, "w.md", "writer", persona="Version two.")
    second = await call_tool(
        host,
        "subagent",
        {"description": "second", "prompt": "p", "subagent_type": "writer"},
        agent=root,
    )
    await settle(host, second.structured["subagent_id"], root)
    assert "Version two." in seen(model, "second")[1]
    await host.services.subagents.followup(
        root, first.structured["subagent_id"], "more", source={"kind": "coordinator"}
    )
    await settle(host, first.structured["subagent_id"], root)
    assert "Version one." in seen(model, "first", -1)[1]
    assert "Version two." not in seen(model, "first", -1)[1]


async def test_a_built_in_persona_ends_with_the_advice_for_the_childs_mode(env):
    host, _ = env
    model = scripted(host)
    model.script("bg", say("ok"))
    model.script("fg", say("ok"))
    root = await host.services.agents.create(label="root")
    for label, background in (("bg", True), ("fg", False)):
        args = {"description": label, "prompt": "p", "run_in_background": background}
        result = await call_tool(host, "subagent", args, agent=root)
        await settle(host, result.structured["subagent_id"], root)
    one_shot, reporting, unreported = CLOSINGS
    _, background_prompt = seen(model, "bg")
    assert f"{GENERAL_PURPOSE_PERSONA} {unreported}" in background_prompt
    assert one_shot not in background_prompt  # "all the delegating agent sees": not so here
    assert "report tool" not in background_prompt  # no subagent_report plugin: no such tool
    _, foreground_prompt = seen(model, "fg")
    assert f"{GENERAL_PURPOSE_PERSONA} {one_shot}" in foreground_prompt
    assert reporting not in foreground_prompt and unreported not in foreground_prompt


async def test_a_background_child_is_told_to_report_only_when_it_has_the_report_tool(tmp_path):
    host = build_host(
        ("subagent", agent_host_subagent),
        ("subagent_report", report_plugin),
        data_dir=tmp_path / "data",
    )
    host.profiles.environ = {"AGENT_HOST_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    host.profiles.cwd = tmp_path / "project"
    model = scripted(host)
    model.script("bg", say("ok"))
    root = await host.services.agents.create(label="root")
    args = {"description": "bg", "prompt": "p", "run_in_background": True}
    result = await call_tool(host, "subagent", args, agent=root)
    await settle(host, result.structured["subagent_id"], root)
    _, reporting, unreported = CLOSINGS
    tools, prompt = seen(model, "bg")
    assert "report" in tools
    assert f"{GENERAL_PURPOSE_PERSONA} {reporting}" in prompt
    assert unreported not in prompt
    await host.aclose()


async def test_description_lists_profiles_and_the_schema_is_stable(env):
    host, files = env
    tool_ = host.tools.get("subagent")
    parameters = tool_.parameters
    assert parameters["properties"]["subagent_type"] == {
        "type": ["string", "null"],
        "description": "The profile to start the subagent from, one of those listed in the tool "
        "description; omit it for general-purpose (a plain subagent with your tools if there is "
        "no such profile).",
    }
    before = tool_.describe()
    assert before.endswith(
        "Profiles (subagent_type) give the subagent a role, its own instructions and a set of tools:\n"
        "- Explore: Read-only agent for searching files and researching a codebase: finds "
        "files, searches their contents and reads them, and reports exact paths and lines; it "
        "cannot change anything. (tools: read_file, list_files, grep, mcp.fetch)\n"
        "- general-purpose: General-purpose agent for researching questions and carrying out "
        "multi-step tasks; has all of your tools."
    )
    assert tool_.describe() == before
    write(files.project, "r.md", "reviewer", description="Reviews diffs", tools="read_file")
    after = tool_.describe()
    assert after.endswith("\n- reviewer: Reviews diffs (tools: read_file)")
    assert tool_.describe() == after and tool_.parameters == parameters
    # What the model is offered is the same text.
    model = scripted(host)
    root = await host.services.agents.create(label="root")
    root.followup("hi")
    await root.wait_idle()
    (spec,) = [t for t in model.requests_for("root")[0].tools if t.name == "subagent"]
    assert spec.description == after


async def test_unknown_and_ambiguous_types_start_nothing(env):
    host, files = env
    write(files.user, "a.md", "code-reviewer")
    write(files.user, "b.md", "Code_Reviewer")
    (files.user / "broken.md").write_text("nothing")
    root = await host.services.agents.create(label="root")
    unknown = await call_tool(
        host, "subagent", {"description": "x", "prompt": "p", "subagent_type": "tester"}, agent=root
    )
    assert unknown.is_error
    assert unknown.text == (
        "subagent failed: unknown subagent_type 'tester'; available profiles: code-reviewer, "
        "Code_Reviewer, Explore, general-purpose\n"
        f"Skipped profile files: {files.user}/broken.md: no front matter: the file must start "
        "with a '---' line"
    )
    ambiguous = await call_tool(
        host,
        "subagent",
        {"description": "x", "prompt": "p", "subagent_type": "code reviewer"},
        agent=root,
    )
    assert ambiguous.text == (
        "subagent failed: subagent_type 'code reviewer' matches several profiles: "
        "code-reviewer, Code_Reviewer; use one exactly"
    )
    assert [h.id for h in host.services.sessions.list()] == [root.id]


async def test_background_model_and_max_steps_from_the_profile(env):
    host, files = env
    write(files.user, "f.md", "fast", model="quick", background="false", max_steps="1")
    write(files.user, "g.md", "ghost", model="nowhere")
    quick = ScriptedModel()
    quick.script("q", say("quick answer"))
    host.services.models.register("quick", quick)
    root = await host.services.agents.create(label="root")
    result = await call_tool(
        host, "subagent", {"description": "q", "prompt": "p", "subagent_type": "fast"}, agent=root
    )
    assert (result.text, result.is_error) == ("quick answer", False)  # foreground, on "quick"
    assert scripted(host).requests_for("q") == []
    refused = await call_tool(
        host, "subagent", {"description": "g", "prompt": "p", "subagent_type": "ghost"}, agent=root
    )
    assert refused.is_error and refused.text.startswith(
        f'subagent failed: profile "ghost" ({files.user}/g.md) names model "nowhere", which is '
        "not registered (known: "
    )


async def test_the_deployment_filter_bounds_every_profile(tmp_path):
    config = {
        "plugins": {
            "subagent": {
                "tools": [
                    {
                        "name": "subagent",
                        "provider": "spawn",
                        "allow": ["read_file", "grep", "subagent"],
                        "deny": ["grep"],
                    },
                ]
            }
        }
    }
    host, files = make(tmp_path, config)
    try:
        write(files.project, "s.md", "sneaky", tools="read_file, shell")
        write(files.project, "w.md", "wide")  # every tool: still only what the deployment allows
        write(files.user, "u.md", "mine", tools="shell, read_file")  # trusted, yet bounded
        model = scripted(host)
        root = await host.services.agents.create(label="root")
        refused = await call_tool(
            host,
            "subagent",
            {"description": "s", "prompt": "p", "subagent_type": "sneaky"},
            agent=root,
        )
        assert refused.is_error and (
            f"{files.project}/s.md: tools: names tools the deployment does not allow: shell"
            in refused.text
        )
        assert "sneaky" not in host.tools.get("subagent").describe()
        for label, name in (("w", "wide"), ("u", "mine"), ("n", None)):
            model.script(label, say("ok"))
            args = {"description": label, "prompt": "p", "run_in_background": False}
            if name:
                args["subagent_type"] = name
            result = await call_tool(host, "subagent", args, agent=root)
            assert not result.is_error, result.text
        assert seen(model, "w")[0] == ["subagent", "read_file"]
        assert seen(model, "u")[0] == ["read_file"]
        assert seen(model, "n")[0] == ["subagent", "read_file"]
    finally:
        await host.aclose()
