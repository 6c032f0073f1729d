"""Installation, rollback and revocation of the report contribution."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import tool_subagent_report.plugin as report_plugin

from host import hookimpl
from host.agents import call, say
from host.errors import HostError
from host.naming import NamedRegistry, Owner
from host.subagents.errors import SubagentError
from host.subagents.types import ChildRequest
from host.tools import Tool, ToolExec, tool
from tests.scenarios import TextArgs
from tests.subagents.report import ReportEnv, echo, frame, source, tool_names
from tests.support import Gate, accepted

GUIDANCE = report_plugin.GUIDANCE


def has_report(agent: Any) -> bool:
    return agent.tools.get("report") is not None or "subagent_report" in agent.sections.own


# -- revocation and re-grant -----------------------------------------------------------------


async def test_blocking_revokes_from_every_resident_child_at_once(env: ReportEnv) -> None:
    env.add_tool(echo)
    root = await env.root()
    first_gate, second_gate = Gate(), Gate()
    env.model.script("a", first_gate.reply(call("report", output="after revoke")), say("a done"))
    env.model.script("b", second_gate.reply(say("b done")))
    first = await env.start(root, label="a")
    second = await env.start(root, label="b")
    await first_gate.entered.wait()
    await second_gate.entered.wait()
    assert has_report(first) and has_report(second)
    assert GUIDANCE in first.sections.system_prompt()
    env.host.plugins.block("subagent_report")
    # immediately: both resident children lost the tool and the section
    for child in (first, second):
        assert child.tools.get("report") is None
        assert "subagent_report" not in child.sections.own
        assert GUIDANCE not in child.sections.system_prompt()
        assert env.activation(child.id) is not None  # they stay alive without it
    assert env.plugin_row()["state"] == "blocked"
    assert len(env.subagents.setup) == 0
    first_gate.open()
    second_gate.open()
    await env.settled(first.id)
    await env.settled(second.id, root)
    # the held call asked for report; the revoked child cannot execute it
    (result,) = await env.stored_messages(first.id, "tool")
    assert (result.is_error, result.content) == (True, 'unknown tool "report"')
    later = env.model.requests_for("a")[1]
    assert "report" not in tool_names(later) and GUIDANCE not in later.system_prompt
    assert [(a.source or {}).get("kind") for a in accepted(root)] == [
        "subagent-settled",
        "subagent-settled",
    ]


async def test_unblocking_grants_report_only_at_the_next_activation(env: ReportEnv) -> None:
    root = await env.root()
    first_gate, second_gate = Gate(), Gate()
    env.model.script(
        "bg",
        first_gate.reply(say("thinking")),
        second_gate.reply(call("report", output="too early")),
        say("first activation done"),
    )
    child = await env.start(root, prompt="start")
    await first_gate.entered.wait()
    env.host.plugins.block("subagent_report")
    first_gate.open()  # "thinking" ends the turn; a followup keeps the child resident
    await env.subagents.followup(root, child.id, "continue", source=None)
    await second_gate.entered.wait()
    env.host.plugins.unblock("subagent_report")
    assert env.plugin_row()["state"] == "active"
    assert len(env.subagents.setup) == 1
    # the resident child is not re-granted mid-ChildActivation
    assert env.activation(child.id) is not None
    assert not has_report(child)
    second_gate.open()
    await env.settled(child.id, root)
    (refused,) = await env.stored_messages(child.id, "tool")
    assert (refused.is_error, refused.content) == (True, 'unknown tool "report"')
    held, *after_block = env.model.requests_for("bg")
    assert "report" in tool_names(held)  # asked before the block
    assert after_block and all("report" not in tool_names(r) for r in after_block)
    before = len(env.model.requests_for("bg"))
    # the next ChildActivation (a cold resume) composes the current contributions again
    env.model.script("bg", call("report", output="back again"), say("second activation done"))
    await env.subagents.followup(root, child.id, "once more", source=None)
    resumed = env.agents.get(child.id)
    assert resumed is not None and resumed is not child
    assert env.activation(child.id).resumed
    assert has_report(resumed)
    await env.settled(child.id, root)
    resumed_request = env.model.requests_for("bg")[before]
    assert tool_names(resumed_request).count("report") == 1
    assert GUIDANCE in resumed_request.system_prompt
    reports = [a for a in accepted(root) if a.source == source(child.id)]
    assert [a.content for a in reports] == [frame(child.id, "back again")]


async def test_a_cold_resume_while_blocked_has_no_report_and_nothing_is_snapshotted(
    make_env: Callable[..., ReportEnv],
) -> None:
    env = make_env()
    root = await env.root()
    env.model.script("bg", say("first"))
    child = await env.start(root)
    await env.settled(child.id, root)
    env.host.plugins.block("subagent_report")
    env.model.script("bg", say("second"))
    await env.subagents.followup(root, child.id, "again", source=None)
    resumed = env.agents.get(child.id)
    assert resumed is not None and not has_report(resumed)  # withheld: no report at all
    await env.settled(child.id, root)
    stored = await env.services.session_persistence.inspect(child.id)
    assert "report" not in str([e.body for e in stored.events if e.kind == "subagent/descriptor"])


# -- rollback ---------------------------------------------------------------------------------


@tool("report", "A squatter's report.", TextArgs)
async def squatter_report(args: TextArgs, exec: ToolExec) -> str:
    return "squatted"


class Squatter:
    """A test plugin whose contribution (registered first) puts its own ``report`` in scope."""

    requires = ("subagents",)

    def __init__(self, made: Tool = squatter_report) -> None:
        self.made = made
        self.armed = True
        self.setups: list[Any] = []
        self.released = 0

    @hookimpl
    def activate(self, ctx: Any, scope: Any) -> None:
        scope.add(ctx.subagents.register_continuable_setup(self.contribute))

    def contribute(self, setup: Any) -> Any:
        self.setups.append(setup)
        if not self.armed:
            return lambda: None
        remove = setup.tools.register("report", self.made, owner="squatter")

        def release() -> None:
            self.released += 1
            remove()

        return release


async def test_a_half_failed_installation_rolls_back_and_publishes_nothing(
    make_env: Callable[..., ReportEnv],
) -> None:
    squatter = Squatter()
    env = make_env(before=(("squatter", squatter),))
    assert env.plugin_row("squatter")["state"] == "active"
    root = await env.root()
    files = set(env.data_dir.glob("*.jsonl"))
    with pytest.raises(HostError) as caught:
        await env.subagents.start_continuable("spawn", ChildRequest("go"), parent=root, label="bg")
    assert caught.value.code == "DUPLICATE_NAME"
    assert 'plugin "subagent_report"' in caught.value.message
    (setup,) = squatter.setups
    # the section went in first and was rolled back; the squatter's tool was rolled back too
    assert "subagent_report" not in setup.sections
    assert "report" not in setup.tools
    assert squatter.released == 1
    # nothing published: no agent, no ChildActivation, no session file, nothing sent to the parent
    assert env.agents.get(setup.id) is None
    assert env.subagents.manager().residents() == []
    assert set(env.data_dir.glob("*.jsonl")) == files
    assert accepted(root) == []
    assert env.plugin_row()["state"] == "active"  # one child failed, not the plugin
    # with the clash gone the next child gets report normally
    squatter.armed = False
    env.model.script("bg", say("fine"))
    child = await env.start(root)
    assert has_report(child)
    await env.settled(child.id, root)


class Revoker:
    """A test plugin whose contribution (registered after report's) blocks the report plugin
    while a child is being built: a revocation racing the child's provisioning."""

    requires = ("subagents",)

    def __init__(self) -> None:
        self.host: Any = None
        self.armed = True
        self.seen: list[tuple[bool, bool]] = []
        self.released = 0

    @hookimpl
    def activate(self, ctx: Any, scope: Any) -> None:
        scope.add(ctx.subagents.register_continuable_setup(self.contribute))

    def contribute(self, setup: Any) -> Any:
        if self.armed:
            before = ("report" in setup.tools, "subagent_report" in setup.sections)
            self.host.plugins.block("subagent_report")
            after = ("report" in setup.tools, "subagent_report" in setup.sections)
            self.seen += [before, after]

        def release() -> None:
            self.released += 1

        return release


async def test_a_revocation_while_a_child_is_built_publishes_nothing(
    make_env: Callable[..., ReportEnv],
) -> None:
    revoker = Revoker()
    env = make_env(after=(("revoker", revoker),))
    revoker.host = env.host
    root = await env.root()
    files = set(env.data_dir.glob("*.jsonl"))
    with pytest.raises(SubagentError) as caught:
        await env.subagents.start_continuable("spawn", ChildRequest("go"), parent=root, label="bg")
    assert caught.value.code == "ACTIVATION_SETUP_REVOKED"
    # installed, then revoked immediately while still provisioning
    assert revoker.seen == [(True, True), (False, False)]
    assert revoker.released == 1  # the rest of the batch was rolled back
    assert env.subagents.manager().residents() == []
    assert set(env.data_dir.glob("*.jsonl")) == files
    assert env.plugin_row()["state"] == "blocked"
    revoker.armed = False
    env.model.script("bg", say("fine"))
    child = await env.start(root)
    assert not has_report(child)
    await env.settled(child.id, root)
    env.host.plugins.unblock("subagent_report")
    env.model.script("bg", say("fine again"))
    regranted = await env.start(root)
    assert has_report(regranted)
    await env.settled(regranted.id, root)


# -- make_contribution with a fake setup (failing disposers) ----------------------------------


class FakeLayer:
    """A scope layer whose registration or removal can be made to fail."""

    def __init__(
        self,
        log: list[str],
        *,
        refuse: Exception | None = None,
        stuck: Exception | None = None,
    ) -> None:
        self.log = log
        self.refuse = refuse
        self.stuck = stuck
        self.items: dict[str, Any] = {}

    def register(self, name: str, item: Any, *, owner: str) -> Callable[[], bool]:
        """As ``NamedRegistry.register``: the disposer says whether it removed this entry."""
        if self.refuse is not None:
            raise self.refuse
        entry = (item, owner)
        self.items[name] = entry

        def remove() -> bool:
            self.log.append(f"remove {name}")
            if self.stuck is not None:
                raise self.stuck
            if self.items.get(name) is entry:
                del self.items[name]
                return True
            return False

        return remove


def test_the_fake_layer_disposes_like_a_named_registry() -> None:
    real: NamedRegistry[str] = NamedRegistry("tool")
    fake = FakeLayer([])
    for layer in (real, fake):
        dispose = layer.register("report", "v1", owner="o")
        assert (dispose(), dispose()) == (True, False)  # exactly this registration, once
        stale = layer.register("report", "v2", owner="o")
        assert stale() is True
        again = layer.register("report", "v3", owner="o")
        assert stale() is False  # an old disposer leaves a newer registration alone
        assert again() is True


def fake_setup(tools: FakeLayer, sections: FakeLayer) -> Any:
    return SimpleNamespace(id="child_fake", tools=tools, sections=sections)


def contribute() -> Callable[[Any], Any]:
    return report_plugin.make_contribution(report_plugin.Config(), Owner("subagent_report"))


def test_installs_section_then_tool_and_disposes_tool_then_section() -> None:
    log: list[str] = []
    tools, sections = FakeLayer(log), FakeLayer(log)
    dispose = contribute()(fake_setup(tools, sections))
    assert list(sections.items) == ["subagent_report"] and list(tools.items) == ["report"]
    assert sections.items["subagent_report"][0].text == GUIDANCE
    assert tools.items["report"][1] == Owner("subagent_report")
    dispose()
    assert log == ["remove report", "remove subagent_report"]
    assert tools.items == {} and sections.items == {}
    dispose()  # idempotent
    assert log == ["remove report", "remove subagent_report"]


def test_a_failing_tool_install_rolls_the_section_back_and_reraises() -> None:
    log: list[str] = []
    clash = RuntimeError("report is taken")
    tools, sections = FakeLayer(log, refuse=clash), FakeLayer(log)
    with pytest.raises(RuntimeError) as caught:
        contribute()(fake_setup(tools, sections))
    assert caught.value is clash
    assert log == ["remove subagent_report"]
    assert sections.items == {} and tools.items == {}


def test_a_failing_rollback_is_aggregated_with_the_original_error() -> None:
    log: list[str] = []
    clash, stuck = RuntimeError("report is taken"), OSError("section will not go")
    tools, sections = FakeLayer(log, refuse=clash), FakeLayer(log, stuck=stuck)
    with pytest.raises(ExceptionGroup) as caught:
        contribute()(fake_setup(tools, sections))
    assert caught.value.exceptions == (clash, stuck)  # the original error first
    assert log == ["remove subagent_report"]


def test_a_failing_section_install_installs_nothing() -> None:
    log: list[str] = []
    refused = RuntimeError("no sections here")
    tools, sections = FakeLayer(log), FakeLayer(log, refuse=refused)
    with pytest.raises(RuntimeError) as caught:
        contribute()(fake_setup(tools, sections))
    assert caught.value is refused
    assert tools.items == {} and log == []


def test_the_disposer_attempts_both_removals_and_aggregates_failures() -> None:
    log: list[str] = []
    tool_stuck, section_stuck = RuntimeError("tool stuck"), RuntimeError("section stuck")
    tools = FakeLayer(log, stuck=tool_stuck)
    sections = FakeLayer(log, stuck=section_stuck)
    dispose = contribute()(fake_setup(tools, sections))
    with pytest.raises(ExceptionGroup) as caught:
        dispose()
    assert log == ["remove report", "remove subagent_report"]
    assert set(caught.value.exceptions) == {tool_stuck, section_stuck}
    dispose()  # attempted exactly once
    assert log == ["remove report", "remove subagent_report"]


async def test_after_a_restart_a_cold_resume_uses_the_new_deployment_policy(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    first = ReportEnv(data_dir)  # next-step
    try:
        root = await first.root()
        first.model.script("bg", say("first activation"))
        child = await first.start(root)
        await first.settled(child.id, root)
        root_id, child_id = root.id, child.id
    finally:
        await first.close()
    second = ReportEnv(data_dir, config={"plugins": {"subagent_report": {"delivery": "quiet"}}})
    try:
        root = await second.agents.resume(root_id, label="root")
        second.model.script("bg", call("report", output="from the new host"), say("done"))
        await second.subagents.followup(root, child_id, "again", source=None)
        await second.settled(child_id, root)
        (report,) = [a for a in accepted(root) if a.source == source(child_id)]
        assert (report.delivery, report.content) == (
            "inject",
            frame(child_id, "from the new host"),
        )
    finally:
        await second.close()
