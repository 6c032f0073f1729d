"""Profile directories are listed once per change, not at every delegation and description."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import agent_host_subagent
import pytest

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


async def delegate(host: Host, root: object, times: int, **extra: str) -> None:
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
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    never = {"plugins": {"session_persistence": {"fsync": "never"}}}
    host = build_host(("subagent", agent_host_subagent), data_dir=tmp_path / "data", config=never)
    try:
        user = tmp_path / "home" / "agents"
        host.profiles.environ = {"AGENT_HOST_HOME": str(user.parent), "HOME": str(tmp_path)}
        host.profiles.cwd = tmp_path / "project"
        settled_file(user, "alpha")
        host.services.models.resolve("scripted").answer_unscripted(lambda request: say("done"))
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
    finally:
        await host.aclose()
