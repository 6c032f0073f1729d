"""Work a delegation does not repeat: profile directories are listed once per change (not at
every delegation and tool description), and no run-time ``Protocol`` check is made per child."""

from __future__ import annotations

import os
import typing
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import agent_host_subagent
import pytest

from host.agents.agent import Agent
from host.agents.scripted import say
from host.app import Host
from host.testing import build_host, call_tool

OLD = 1_000_000_000
PROFILE = "---\nname: {name}\ndescription: The {name} profile.\n---\nYou are {name}.\n"


def listings(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every ``os.listdir`` from now on, by the directory listed."""
    listed: Counter[str] = Counter()
    real = os.listdir

    def recording(path: str | os.PathLike[str] = ".") -> list[str]:
        listed[os.fspath(path)] += 1
        return real(path)

    monkeypatch.setattr(os, "listdir", recording)
    return listed


def settled_file(directory: Path, name: str) -> None:
    """A profile file written long ago, in a directory last changed long ago."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.md"
    path.write_text(PROFILE.format(name=name))
    os.utime(path, (OLD, OLD))
    os.utime(directory, (OLD, OLD))


@pytest.fixture
async def host(tmp_path: Path) -> AsyncIterator[Host]:
    """A host with the delegation tool whose children answer "done" (no fsync: not timed)."""
    never = {"plugins": {"session_persistence": {"fsync": "never"}}}
    built = build_host(("subagent", agent_host_subagent), data_dir=tmp_path / "data", config=never)
    built.services.models.resolve("scripted").answer_unscripted(lambda request: say("done"))
    yield built
    await built.aclose()


async def delegate(host: Host, root: Agent, times: int, **extra: str) -> None:
    """``times`` background delegations, each read back to the end of its child."""
    manager = host.services.subagents.manager()
    for index in range(times):
        args = {"description": f"task {index}", "prompt": "p", **extra}
        result = await call_tool(host, "subagent", args, agent=root)
        assert not result.is_error, result.text
        host.tools.get("subagent").describe()  # as every turn of the parent does
        activation = manager.activation(result.structured["subagent_id"])
        if activation is not None:
            await activation.wait_done()


async def test_delegations_list_the_profile_directory_once_until_it_changes(
    host: Host, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "home" / "agents"
    host.profiles.environ = {"AGENT_HOST_HOME": str(user.parent), "HOME": str(tmp_path)}
    host.profiles.cwd = tmp_path / "project"
    settled_file(user, "alpha")
    root = await host.services.agents.create(label="root")
    listed = listings(monkeypatch)

    await delegate(host, root, 1, subagent_type="alpha")
    once = listed[str(user)]
    assert once > 0
    await delegate(host, root, 20, subagent_type="alpha")
    assert listed[str(user)] == once  # nothing changed: nothing listed again

    (user / "beta.md").write_text(PROFILE.format(name="beta"))  # the directory changes
    await delegate(host, root, 1, subagent_type="beta")
    assert "- beta: The beta profile." in host.tools.get("subagent").describe()
    assert listed[str(user)] > once


def protocol_checks(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every ``isinstance`` against a run-time checkable ``Protocol`` from now on, by name."""
    checked: Counter[str] = Counter()
    meta = type(typing.Protocol)
    real: Any = meta.__instancecheck__

    def counting(cls: type, instance: object) -> bool:
        if getattr(cls, "_is_runtime_protocol", False):
            checked[cls.__name__] += 1
        return bool(real(cls, instance))

    monkeypatch.setattr(meta, "__instancecheck__", counting)
    return checked


async def test_a_child_costs_no_run_time_protocol_check(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = await host.services.agents.create(label="root")
    await delegate(host, root, 1)  # the host's first child builds what it builds once
    checked = protocol_checks(monkeypatch)
    await delegate(host, root, 5)
    await root.wait_idle()
    assert checked == Counter()


async def test_delegations_read_the_global_tools_owners_once_until_they_change(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    import host.tools.globs as globs
    from host.tools import tool

    root = await host.services.agents.create(label="root")
    await delegate(host, root, 1)
    read: list[int] = []
    real = globs.plugins_by_tool

    def counting(registry: Any) -> dict[str, str | None]:
        read.append(len(registry))
        return real(registry)

    monkeypatch.setattr(globs, "plugins_by_tool", counting)
    await delegate(host, root, 20)  # each loads the profiles twice: start and description
    assert read == []

    @tool(name="probe_tool")
    async def probe() -> str:
        """A probe."""
        return "probe"

    dispose = host.tools.register("probe_tool", probe, owner="probe")
    await delegate(host, root, 3)
    dispose()
    await delegate(host, root, 3)
    assert read == [len(host.tools) + 1, len(host.tools)]  # once per change of the tools


async def test_delegations_find_the_identity_index_without_building_its_path(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    import host.subagents.service as service

    root = await host.services.agents.create(label="root")
    await delegate(host, root, 1)
    index = host.services.subagents.index()
    built: list[object] = []

    def counting(*parts: Any) -> Path:
        built.append(parts)
        return Path(*parts)

    monkeypatch.setattr(service, "Path", counting)
    await delegate(host, root, 20)
    assert built == []
    assert host.services.subagents.index() is index


def counted(monkeypatch: pytest.MonkeyPatch, name: str) -> list[tuple[Any, ...]]:
    """Every call of ``host.api.<name>`` from now on, by its arguments."""
    import host.api

    calls: list[tuple[Any, ...]] = []
    real = getattr(host.api, name)

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(host.api, name, counting)
    return calls


async def test_the_default_profile_is_started_from_as_found_not_looked_up_by_name(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = await host.services.agents.create(label="root")
    resolved = counted(monkeypatch, "resolve")
    result = await call_tool(host, "subagent", {"description": "d", "prompt": "p"}, agent=root)
    assert result.structured["subagent_type"] == "general-purpose"
    await delegate(host, root, 3)
    assert resolved == []  # no subagent_type: the default profile, as loaded
    await delegate(host, root, 1, subagent_type="general_purpose")  # a name: resolved
    assert [args[0] for args in resolved] == ["general_purpose"]


async def test_a_delegation_reads_host_api_names_without_the_import_system(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The delegation tool and the report contribution read ``host.api``'s lazy names as module
    attributes once loaded: no lazy lookup at all per child (a ``from host.api import`` inside
    a function probes ``host.api.__path__`` through its ``__getattr__`` at every call)."""
    import tool_subagent_report.plugin as report_plugin

    import host.api

    never = {"plugins": {"session_persistence": {"fsync": "never"}}}
    plugins = [("subagent", agent_host_subagent), ("subagent_report", report_plugin)]
    built = build_host(*plugins, data_dir=tmp_path / "data", config=never)
    built.services.models.resolve("scripted").answer_unscripted(lambda request: say("done"))
    try:
        root = await built.services.agents.create(label="root")
        await delegate(built, root, 1)  # the first child loads what it loads once
        looked_up: list[str] = []
        real = host.api.__getattr__

        def counting(name: str) -> Any:
            looked_up.append(name)
            return real(name)

        monkeypatch.setattr(host.api, "__getattr__", counting)
        await delegate(built, root, 3)
        await delegate(built, root, 1, subagent_type="general-purpose")
        assert looked_up == []
    finally:
        await built.aclose()
