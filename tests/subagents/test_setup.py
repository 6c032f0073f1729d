"""The continuable setup registry: ordered application, rollback, commit-time revocation check,
immediate revocation from provisioning and resident children, exactly-once release.

Children are built by the real ``AgentRegistry`` over a real ``SessionStore`` with JSONL
persistence in ``tmp_path`` and the scripted model, so "nothing published" is checked on disk.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from host.agents.agent import Agent
from host.agents.prompt import PromptSection, register_section
from host.agents.registry import AgentRegistry, AgentSetup, SetupStep
from host.agents.scripted import ScriptedModel
from host.disposal import Disposer
from host.naming import NamedRegistry
from host.sessions.model import SessionHeader
from host.sessions.store import SessionStore
from host.subagents.errors import SubagentError
from host.subagents.setup import (
    ContinuableSetupRegistry,
    Contribution,
    Installation,
    SetupHooks,
)
from host.tools import Tool
from host.tools.scope import tool_registry
from tests.agents.helpers import TextArgs
from tests.support import named_tool

# -- fixtures (the rest come from tests.fixtures via the conftest) ------------------------


@pytest.fixture
def global_tools() -> NamedRegistry[Tool]:
    tools = tool_registry()
    tools.register("echo", named_tool("echo", params=TextArgs), owner="test")
    return tools


@pytest.fixture
def agent_ctx() -> None:
    return None


@pytest.fixture
def setups() -> ContinuableSetupRegistry:
    return ContinuableSetupRegistry()


# -- helpers -------------------------------------------------------------------------------


class Contributions:
    """Contributions that install a scoped tool and section named after themselves, and
    record every installation and every disposal (by ``name@child``)."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.disposed: Counter[str] = Counter()

    def make(
        self, name: str, *, fail_install: bool = False, fail_dispose: bool = False
    ) -> Contribution:
        def contribute(setup: AgentSetup) -> Disposer:
            if fail_install:
                self.log.append(f"refuse {name}@{setup.id}")
                raise ValueError(f"{name} refused")
            self.log.append(f"install {name}@{setup.id}")
            remove_tool = setup.tools.register(name, named_tool(name, params=TextArgs), owner=name)
            remove_section = register_section(
                setup.sections, PromptSection(name, f"guidance {name}"), owner=name
            )

            def dispose() -> None:
                self.log.append(f"dispose {name}@{setup.id}")
                self.disposed[f"{name}@{setup.id}"] += 1
                remove_section()
                remove_tool()
                if fail_dispose:
                    raise RuntimeError(f"dispose {name}@{setup.id} failed")

            return dispose

        contribute.__qualname__ = f"contribution {name}"
        return contribute


def register(
    setups: ContinuableSetupRegistry, contributions: Contributions, name: str, **kw: bool
) -> Disposer:
    return setups.register(contributions.make(name, **kw))


async def create(
    agents: AgentRegistry, setups: ContinuableSetupRegistry, child_id: str, *extra: SetupStep
) -> Agent:
    hooks = setups.setup_step()
    return await agents.create(
        SessionHeader(id=child_id),
        label=child_id,
        setup=[hooks.step, *extra],
        commit=hooks.commit,
    )


def own_tools(agent: Agent) -> list[str]:
    return list(agent.tools.own)


def nothing_published(
    agents: AgentRegistry, store: SessionStore, data_dir: Path, child_id: str
) -> bool:
    return (
        agents.get(child_id) is None
        and store.get(child_id) is None
        and not (data_dir / f"{child_id}.jsonl").exists()
        and list(data_dir.iterdir()) == []
    )


# -- application and rollback --------------------------------------------------------------


async def test_contributions_apply_in_registration_order_and_reach_the_model(
    agents: AgentRegistry, setups: ContinuableSetupRegistry, model: ScriptedModel
) -> None:
    contributions = Contributions()
    for name in ("report", "notes", "audit"):
        register(setups, contributions, name)
    assert len(setups) == 3

    child = await create(agents, setups, "child")

    assert contributions.log == [
        "install report@child",
        "install notes@child",
        "install audit@child",
    ]
    assert own_tools(child) == ["report", "notes", "audit"]
    assert child.sections.system_prompt() == "guidance report\n\nguidance notes\n\nguidance audit"
    child.followup("hi")
    await child.wait_idle()
    (request,) = model.requests_for("child")
    assert [spec.name for spec in request.tools] == ["echo", "report", "notes", "audit"]


async def test_a_raising_contribution_rolls_the_batch_back_and_publishes_nothing(
    agents: AgentRegistry,
    setups: ContinuableSetupRegistry,
    store: SessionStore,
    data_dir: Path,
) -> None:
    contributions = Contributions()
    register(setups, contributions, "a")
    register(setups, contributions, "b")
    register(setups, contributions, "bad", fail_install=True)
    register(setups, contributions, "c")
    seen: list[AgentSetup] = []

    def capture(setup: AgentSetup) -> Disposer:
        seen.append(setup)
        return lambda: None

    with pytest.raises(ValueError, match="bad refused") as caught:
        await create(agents, setups, "child", capture)

    assert type(caught.value) is ValueError  # the original error, not a wrapper
    assert contributions.log == [
        "install a@child",
        "install b@child",
        "refuse bad@child",
        "dispose b@child",
        "dispose a@child",
    ]
    assert seen == []  # the agent registry stopped at our step
    assert nothing_published(agents, store, data_dir, "child")


async def test_rollback_of_the_direct_apply_leaves_the_child_scopes_empty(
    agents: AgentRegistry, setups: ContinuableSetupRegistry
) -> None:
    contributions = Contributions()
    register(setups, contributions, "a")
    register(setups, contributions, "bad", fail_install=True)
    seen: list[AgentSetup] = []

    def apply(setup: AgentSetup) -> Disposer:
        seen.append(setup)
        return setups.apply(setup).release

    with pytest.raises(ValueError, match="bad refused"):
        await agents.create(SessionHeader(id="child"), setup=[apply])
    (setup,) = seen
    assert list(setup.tools) == [] and list(setup.sections) == []
    assert contributions.disposed == Counter({"a@child": 1})


async def test_a_failing_rollback_is_grouped_with_the_original_error_first(
    agents: AgentRegistry,
    setups: ContinuableSetupRegistry,
    store: SessionStore,
    data_dir: Path,
) -> None:
    contributions = Contributions()
    register(setups, contributions, "a", fail_dispose=True)
    register(setups, contributions, "b")
    register(setups, contributions, "c", fail_dispose=True)
    register(setups, contributions, "bad", fail_install=True)

    with pytest.raises(ExceptionGroup) as caught:
        await create(agents, setups, "child")

    original, *rollback = caught.value.exceptions
    assert isinstance(original, ValueError) and str(original) == "bad refused"
    assert [str(error) for error in rollback] == [
        "dispose c@child failed",
        "dispose a@child failed",
    ]
    assert caught.value.__cause__ is original
    assert contributions.disposed == Counter({"a@child": 1, "b@child": 1, "c@child": 1})
    assert nothing_published(agents, store, data_dir, "child")


async def test_a_contribution_returning_no_disposer_fails_the_batch(
    agents: AgentRegistry,
    setups: ContinuableSetupRegistry,
    store: SessionStore,
    data_dir: Path,
) -> None:
    contributions = Contributions()
    register(setups, contributions, "a")
    setups.register(lambda setup: None)  # type: ignore[arg-type,return-value]

    with pytest.raises(TypeError, match="not a disposer"):
        await create(agents, setups, "child")
    assert contributions.log == ["install a@child", "dispose a@child"]
    assert nothing_published(agents, store, data_dir, "child")


def test_register_refuses_what_is_not_callable(setups: ContinuableSetupRegistry) -> None:
    with pytest.raises(TypeError, match="must be callable"):
        setups.register("report")  # type: ignore[arg-type]
    assert len(setups) == 0


# -- commit-time revalidation --------------------------------------------------------------


async def test_a_revocation_while_provisioning_fails_the_commit_and_publishes_nothing(
    agents: AgentRegistry,
    setups: ContinuableSetupRegistry,
    store: SessionStore,
    data_dir: Path,
) -> None:
    contributions = Contributions()
    remove_a = register(setups, contributions, "a")
    register(setups, contributions, "b")
    seen: list[AgentSetup] = []

    def revoke_meanwhile(setup: AgentSetup) -> Disposer:
        """A later setup step (between our step and the commit) during which ``a`` goes away."""
        assert own_tools_of(setup) == ["a", "b"]
        remove_a()
        assert own_tools_of(setup) == ["b"]  # revoked immediately, while still provisioning
        seen.append(setup)
        return lambda: None

    with pytest.raises(SubagentError) as caught:
        await create(agents, setups, "child", revoke_meanwhile)

    assert caught.value.code == "ACTIVATION_SETUP_REVOKED"
    assert "contribution a" in caught.value.message
    assert contributions.log == [
        "install a@child",
        "install b@child",
        "dispose a@child",  # the revocation
        "dispose b@child",  # the agent registry's rollback releases what remains
    ]
    assert contributions.disposed == Counter({"a@child": 1, "b@child": 1})
    assert list(seen[0].tools) == []
    assert nothing_published(agents, store, data_dir, "child")


def own_tools_of(setup: AgentSetup) -> list[str]:
    return list(setup.tools)


async def test_commit_check_passes_when_nothing_of_the_batch_was_revoked(
    agents: AgentRegistry, setups: ContinuableSetupRegistry
) -> None:
    contributions = Contributions()
    register(setups, contributions, "a")
    remove_late = register(setups, contributions, "late")
    installation_seen: list[Installation] = []

    def step(setup: AgentSetup) -> Disposer:
        installation = setups.apply(setup)
        installation_seen.append(installation)
        return installation.release

    remove_late()  # removed before the batch started: not applied, so not a revocation
    child = await agents.create(
        SessionHeader(id="child"),
        setup=[step],
        commit=lambda setup: installation_seen[0].commit_check(setup),
    )
    assert own_tools(child) == ["a"]


async def test_a_released_installation_cannot_be_committed(
    agents: AgentRegistry, setups: ContinuableSetupRegistry
) -> None:
    contributions = Contributions()
    register(setups, contributions, "a")

    def release_early(setup: AgentSetup) -> Disposer:
        installation = setups.apply(setup)
        installation.release()
        assert installation.released and installation.active == 0
        with pytest.raises(SubagentError) as caught:
            installation.commit_check(setup)
        assert caught.value.code == "ACTIVATION_SETUP_REVOKED"
        return installation.release

    await agents.create(SessionHeader(id="child"), setup=[release_early])
    assert contributions.disposed == Counter({"a@child": 1})


async def test_setup_hooks_are_single_use(
    agents: AgentRegistry, setups: ContinuableSetupRegistry
) -> None:
    contributions = Contributions()
    register(setups, contributions, "a")
    hooks = setups.setup_step()
    assert isinstance(hooks, SetupHooks)
    step, commit = hooks
    child = await agents.create(SessionHeader(id="child"), setup=[step], commit=commit)
    with pytest.raises(RuntimeError, match="single-use"):
        await agents.create(SessionHeader(id="other"), setup=[step])
    unused = setups.setup_step()
    with pytest.raises(RuntimeError, match="before its setup step"):
        await agents.create(SessionHeader(id="third"), commit=unused.commit)
    assert agents.list() == [child]
    assert contributions.disposed == Counter()


# -- removal: closing and revocation -------------------------------------------------------


async def test_removal_revokes_from_a_resident_child_immediately(
    agents: AgentRegistry, setups: ContinuableSetupRegistry, model: ScriptedModel
) -> None:
    contributions = Contributions()
    remove_report = register(setups, contributions, "report")
    register(setups, contributions, "notes")
    child = await create(agents, setups, "child")
    assert child.tools.get("report") is not None

    remove_report()  # synchronous: no await between removal and the check below

    assert child.tools.get("report") is None
    assert own_tools(child) == ["notes"]
    assert "guidance report" not in child.sections.system_prompt()
    assert agents.get("child") is child and child.status == "idle"  # still alive
    assert contributions.disposed == Counter({"report@child": 1})
    child.followup("still there?")
    await child.wait_idle()
    (request,) = model.requests_for("child")
    assert [spec.name for spec in request.tools] == ["echo", "notes"]

    await child.dispose()  # the child's release does not release the revoked one again
    assert contributions.disposed == Counter({"report@child": 1, "notes@child": 1})


async def test_removal_closes_the_registration_to_new_setups(
    agents: AgentRegistry, setups: ContinuableSetupRegistry
) -> None:
    contributions = Contributions()
    remove_a = register(setups, contributions, "a")
    register(setups, contributions, "b")
    remove_a()
    assert len(setups) == 1
    child = await create(agents, setups, "child")
    assert own_tools(child) == ["b"]
    assert contributions.log == ["install b@child"]


async def test_a_registration_removed_during_a_batch_is_skipped_if_not_yet_applied(
    agents: AgentRegistry, setups: ContinuableSetupRegistry
) -> None:
    contributions = Contributions()
    removers: dict[str, Disposer] = {}

    def first(setup: AgentSetup) -> Disposer:
        removers["later"]()  # closes ``later`` before its turn in this batch
        return lambda: None

    setups.register(first)
    removers["later"] = register(setups, contributions, "later")
    register(setups, contributions, "last")

    child = await create(agents, setups, "child")
    assert own_tools(child) == ["last"]
    assert contributions.log == ["install last@child"]


async def test_a_contribution_removed_during_its_own_call_is_revoked_and_fails_the_commit(
    agents: AgentRegistry,
    setups: ContinuableSetupRegistry,
    store: SessionStore,
    data_dir: Path,
) -> None:
    contributions = Contributions()
    inner = contributions.make("self")
    removers: list[Disposer] = []

    def self_removing(setup: AgentSetup) -> Disposer:
        disposer = inner(setup)
        removers[0]()  # e.g. its plugin unloads while it installs
        return disposer

    removers.append(setups.register(self_removing))
    register(setups, contributions, "other")

    with pytest.raises(SubagentError) as caught:
        await create(agents, setups, "child")
    assert caught.value.code == "ACTIVATION_SETUP_REVOKED"
    assert contributions.disposed == Counter({"self@child": 1, "other@child": 1})
    assert nothing_published(agents, store, data_dir, "child")


async def test_removal_revokes_every_installation_and_aggregates_failures(
    agents: AgentRegistry, setups: ContinuableSetupRegistry
) -> None:
    contributions = Contributions()
    remove_bad = register(setups, contributions, "bad", fail_dispose=True)
    register(setups, contributions, "good")
    one = await create(agents, setups, "one")
    two = await create(agents, setups, "two")

    with pytest.raises(SubagentError) as caught:
        remove_bad()

    assert caught.value.code == "ACTIVATION_SETUP_RELEASE_FAILED"
    group = caught.value.__cause__
    assert isinstance(group, ExceptionGroup)
    assert sorted(str(error) for error in group.exceptions) == [
        "dispose bad@one failed",
        "dispose bad@two failed",
    ]
    assert contributions.disposed == Counter({"bad@one": 1, "bad@two": 1})
    assert own_tools(one) == own_tools(two) == ["good"]
    assert agents.list() == [one, two]  # both children stay alive

    remove_bad()  # idempotent: nothing attempted again, nothing raised
    assert contributions.disposed == Counter({"bad@one": 1, "bad@two": 1})


async def test_a_registration_added_later_reaches_a_resident_child_only_at_its_next_activation(
    agents: AgentRegistry, setups: ContinuableSetupRegistry, data_dir: Path
) -> None:
    contributions = Contributions()
    register(setups, contributions, "a")
    child = await create(agents, setups, "child")

    register(setups, contributions, "late")
    assert own_tools(child) == ["a"]  # never retroactive
    assert "late@child" not in " ".join(contributions.log)

    await child.dispose()  # settles; the session stays on disk
    assert (data_dir / "child.jsonl").exists()
    hooks = setups.setup_step()
    resumed = await agents.resume("child", label="child", setup=[hooks.step], commit=hooks.commit)

    assert own_tools(resumed) == ["a", "late"]  # the cold resume uses the current contributions
    assert contributions.log == [
        "install a@child",
        "dispose a@child",
        "install a@child",
        "install late@child",
    ]


# -- release -------------------------------------------------------------------------------


async def test_release_is_idempotent_and_releases_newest_first(
    agents: AgentRegistry, setups: ContinuableSetupRegistry
) -> None:
    contributions = Contributions()
    for name in ("a", "b", "c"):
        register(setups, contributions, name)
    child = await agents.create(SessionHeader(id="child"))  # a target for a direct apply
    installation = setups.apply(AgentSetup(child, child.tools.own, child.sections.own))
    assert installation.active == 3

    installation.release()
    installation.release()

    assert contributions.log[3:] == ["dispose c@child", "dispose b@child", "dispose a@child"]
    assert contributions.disposed == Counter({"a@child": 1, "b@child": 1, "c@child": 1})
    assert installation.released and installation.active == 0 and own_tools(child) == []


async def test_release_failures_are_aggregated_with_the_code_after_every_attempt(
    agents: AgentRegistry, setups: ContinuableSetupRegistry
) -> None:
    contributions = Contributions()
    register(setups, contributions, "a", fail_dispose=True)
    register(setups, contributions, "b")
    register(setups, contributions, "c", fail_dispose=True)
    child = await create(agents, setups, "child")

    with pytest.raises(ExceptionGroup) as caught:
        await child.dispose()

    (error,) = caught.value.exceptions  # the agent's disposal carries our single error
    assert isinstance(error, SubagentError)
    assert error.code == "ACTIVATION_SETUP_RELEASE_FAILED"
    assert isinstance(error.__cause__, ExceptionGroup)
    assert [str(e) for e in error.__cause__.exceptions] == [
        "dispose c@child failed",
        "dispose a@child failed",
    ]
    assert contributions.disposed == Counter({"a@child": 1, "b@child": 1, "c@child": 1})
    assert agents.get("child") is None


async def test_every_installed_disposer_runs_exactly_once_whatever_triggers_it(
    agents: AgentRegistry, setups: ContinuableSetupRegistry
) -> None:
    contributions = Contributions()
    remove_a = register(setups, contributions, "a")
    remove_b = register(setups, contributions, "b")
    one = await create(agents, setups, "one")
    two = await create(agents, setups, "two")

    remove_a()  # revokes a from both residents
    await one.dispose()  # releases b@one
    remove_b()  # revokes b@two only
    remove_a()
    remove_b()
    await two.dispose()  # nothing left to release
    await one.dispose()

    assert contributions.disposed == Counter({"a@one": 1, "a@two": 1, "b@one": 1, "b@two": 1})
    assert len(setups) == 0


async def test_disposers_may_reenter_the_registry_during_revocation(
    agents: AgentRegistry, setups: ContinuableSetupRegistry
) -> None:
    """A revocation that removes another registration and registers a new one: each disposer
    still runs once, and the new registration is not applied to the resident child."""
    contributions = Contributions()
    removers: dict[str, Disposer] = {}
    inner = contributions.make("a")

    def a(setup: AgentSetup) -> Disposer:
        disposer = inner(setup)

        def dispose() -> None:
            disposer()
            removers["a"]()  # removing itself again: a no-op
            removers["b"]()  # nested revocation of another registration
            removers["new"] = register(setups, contributions, "new")

        return dispose

    removers["a"] = setups.register(a)
    removers["b"] = register(setups, contributions, "b")
    child = await create(agents, setups, "child")

    removers["a"]()

    assert own_tools(child) == []
    assert contributions.disposed == Counter({"a@child": 1, "b@child": 1})
    assert len(setups) == 1  # only "new"
    await child.dispose()
    assert contributions.disposed == Counter({"a@child": 1, "b@child": 1})
    fresh = await create(agents, setups, "fresh")
    assert own_tools(fresh) == ["new"]


async def test_a_release_disposer_that_removes_a_registration_does_not_double_release(
    agents: AgentRegistry, setups: ContinuableSetupRegistry
) -> None:
    contributions = Contributions()
    removers: dict[str, Disposer] = {}
    removers["a"] = register(setups, contributions, "a")

    def b(setup: AgentSetup) -> Disposer:
        return lambda: removers["a"]()  # releasing b (newest first) revokes a meanwhile

    setups.register(b)
    child = await create(agents, setups, "child")
    await child.dispose()
    assert contributions.disposed == Counter({"a@child": 1})
