"""The agents service: creation as a transaction, layered scopes, resume with inbox replay."""

from __future__ import annotations

from pathlib import Path

import pytest

from host.agents import AgentRegistry, ScriptedModel, call, say
from host.agents.prompt import PromptSection, register_section
from host.agents.registry import AgentExistsError, AgentSetup
from host.disposal import Disposer
from host.sessions.model import (
    InboxAccepted,
    InboxClaimed,
    MessageEvent,
    SessionHeader,
    TurnStart,
)
from host.sessions.store import SessionStore
from host.tools.filter import ToolFilter
from tests.agents.helpers import TextArgs
from tests.support import bodies, named_tool, stop_reasons, user_texts


class Installs:
    """Setup steps that record what they installed and what was disposed."""

    def __init__(self) -> None:
        self.log: list[str] = []

    def step(self, name: str, *, fail_dispose: bool = False) -> object:
        def install(setup: AgentSetup) -> Disposer:
            self.log.append(f"install {name}")
            dispose_tool = setup.tools.register(name, named_tool(name, params=TextArgs), owner=name)
            dispose_section = register_section(
                setup.sections, PromptSection(name, f"section {name}"), owner=name
            )

            def dispose() -> None:
                self.log.append(f"dispose {name}")
                dispose_section()
                dispose_tool()
                if fail_dispose:
                    raise RuntimeError(f"dispose {name} failed")

            return dispose

        return install


def failing(setup: AgentSetup) -> Disposer:
    raise ValueError("setup refused")


async def test_a_failing_setup_step_publishes_nothing_and_rolls_back(
    agents: AgentRegistry, store: SessionStore, data_dir: Path
) -> None:
    installs = Installs()
    seen: list[AgentSetup] = []

    def capture(setup: AgentSetup) -> Disposer:
        seen.append(setup)
        return lambda: None

    with pytest.raises(ValueError, match="setup refused"):
        await agents.create(
            SessionHeader(id="child"),
            setup=[installs.step("a"), installs.step("b"), capture, failing],
        )
    assert installs.log == ["install a", "install b", "dispose b", "dispose a"]
    (setup,) = seen
    assert list(setup.tools) == [] and list(setup.sections) == []
    assert len(agents) == 0 and agents.get("child") is None
    assert store.get("child") is None and store.list() == []
    assert list(data_dir.iterdir()) == []


async def test_a_failing_commit_publishes_nothing_and_rolls_back(
    agents: AgentRegistry, store: SessionStore, data_dir: Path
) -> None:
    installs = Installs()

    def commit(setup: AgentSetup) -> None:
        assert "a" in setup.tools  # the commit check sees every installation
        raise RuntimeError("commit refused")

    with pytest.raises(RuntimeError, match="commit refused"):
        await agents.create(SessionHeader(id="child"), setup=[installs.step("a")], commit=commit)
    assert installs.log == ["install a", "dispose a"]
    assert len(agents) == 0 and store.list() == []
    assert list(data_dir.iterdir()) == []


async def test_a_failing_rollback_is_grouped_with_the_original_error(
    agents: AgentRegistry, store: SessionStore
) -> None:
    installs = Installs()
    with pytest.raises(ExceptionGroup) as caught:
        await agents.create(setup=[installs.step("a", fail_dispose=True), failing])
    first, second = caught.value.exceptions
    assert isinstance(first, ValueError) and str(first) == "setup refused"
    assert str(second) == "dispose a failed"
    assert store.list() == [] and len(agents) == 0


async def test_create_publishes_registers_and_dispose_undoes_it(
    agents: AgentRegistry, store: SessionStore, data_dir: Path
) -> None:
    installs = Installs()
    agent = await agents.create(SessionHeader(id="child"), setup=[installs.step("a")])
    assert agents.get("child") is agent and agents.status("child") == "idle"
    assert store.get("child") is agent.session
    assert (data_dir / "child.jsonl").exists()
    with pytest.raises(AgentExistsError):
        await agents.create(SessionHeader(id="child"))
    await agent.dispose()
    assert installs.log == ["install a", "dispose a"]
    assert agents.get("child") is None and store.get("child") is None


async def test_tool_filter_applies_to_the_global_layer_only_and_own_tools_shadow(
    agents: AgentRegistry, model: ScriptedModel
) -> None:
    agents.tools.register("secret", named_tool("secret", params=TextArgs), owner="global")
    agents.tools.register("report", named_tool("report", "global report", TextArgs), owner="global")
    agents.tools.register("search", named_tool("search", "global search", TextArgs), owner="global")

    def own_tools(setup: AgentSetup) -> Disposer:
        one = setup.tools.register("report", named_tool("report", "own report", TextArgs), owner="own")
        two = setup.tools.register("search", named_tool("search", "own search", TextArgs), owner="own")
        return lambda: (two(), one())

    model.script("w", call("secret", text="x"), call("search", text="x"), say("done"))
    agent = await agents.create(
        label="w",
        tool_filter=ToolFilter(allow=("echo", "secret", "search"), deny=("secret", "report")),
        setup=[own_tools],
    )
    agent.followup("go")
    await agent.wait_idle()
    assert [t.name for t in model.requests[0].tools] == ["echo", "report", "search"]
    results = [m.content for m in bodies(agent, MessageEvent) if m.role == "tool"]
    assert results == ['unknown tool "secret"', "own search"]


async def test_duplicate_names_within_a_layer_fail_the_setup(agents: AgentRegistry) -> None:
    installs = Installs()
    with pytest.raises(Exception, match='scoped tool "a"'):
        await agents.create(setup=[installs.step("a"), installs.step("a")])
    assert installs.log == ["install a", "install a", "dispose a"]
    assert len(agents) == 0


async def test_resume_replays_accepted_but_unclaimed_messages(
    agents: AgentRegistry, store: SessionStore, model: ScriptedModel
) -> None:
    # A log as a killed host leaves it: a turn that claimed m1 and never ended, then m2
    # accepted while it ran, then a quiet inject; nothing claimed m2 or m3.
    session = store.new(SessionHeader(id="crashed"))
    store.publish(session)
    session.append(InboxAccepted("m1", "followup", "first task"))
    session.append(TurnStart("t1"))
    session.append(InboxClaimed(("m1",)))
    session.append(MessageEvent(role="user", content="first task", message_id="m1"))
    session.append(InboxAccepted("m2", "followup", "second task", {"kind": "test"}))
    session.append(InboxAccepted("m3", "inject", "quiet fact"))
    store.release("crashed")

    model.script("w", say("did the second task"))
    agent = await agents.resume("crashed", label="w")
    assert agents.get("crashed") is agent
    await agent.wait_idle()

    assert stop_reasons(agent) == ["interrupted", "completed"]  # the store closed turn t1
    (request,) = model.requests
    assert user_texts(request) == ["first task", "second task", "quiet fact"]
    assert bodies(agent, InboxClaimed)[-1].message_ids == ("m2", "m3")
    replayed = [m for m in bodies(agent, MessageEvent) if m.message_id == "m2"]
    assert [(m.role, m.source) for m in replayed] == [("user", {"kind": "test"})]
    model.assert_consumed()


async def test_resume_with_only_an_inject_stays_idle(
    agents: AgentRegistry, store: SessionStore, model: ScriptedModel
) -> None:
    session = store.new(SessionHeader(id="quiet"))
    store.publish(session)
    session.append(InboxAccepted("m1", "inject", "fact"))
    store.release("quiet")
    agent = await agents.resume("quiet")
    assert agent.status == "idle" and [m.message_id for m in agent.inbox.pending()] == ["m1"]
    assert model.requests == []


async def test_a_failed_resume_setup_releases_the_session(
    agents: AgentRegistry, store: SessionStore
) -> None:
    store.publish(store.new(SessionHeader(id="again")))
    store.release("again")
    with pytest.raises(ValueError):
        await agents.resume("again", setup=[failing])
    assert store.get("again") is None and len(agents) == 0
    agent = await agents.resume("again")  # the lock was released
    assert agents.get("again") is agent
