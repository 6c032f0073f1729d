"""Writing profile files, hosts whose profile directories live under a test's tmp_path, and
what a child's model was offered."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import agent_host_subagent
import attrs

from host.agents.scripted import ScriptedModel
from host.app import Host
from host.profiles.library import ProfileLibrary
from host.testing import build_host, call_tool


def write(directory: Path, file: str, name: str, description: str = "d", **fields: str) -> Path:
    """A profile file ``directory/file`` with the given front-matter fields and a persona."""
    directory.mkdir(parents=True, exist_ok=True)
    lines = ["---", f"name: {name}", f"description: {description}"]
    persona = fields.pop("persona", f"You are {name}.")
    lines += [f"{key}: {value}" for key, value in fields.items()]
    path = directory / file
    path.write_text("\n".join([*lines, "---", persona, ""]), encoding="utf-8")
    return path


def environ(tmp_path: Path) -> dict[str, str]:
    """``AGENT_HOST_HOME`` and ``HOME`` (where Claude Code's ``~/.claude`` is) in tmp_path."""
    return {"AGENT_HOST_HOME": str(tmp_path / "home"), "HOME": str(tmp_path / "real-home")}


def library(tmp_path: Path) -> tuple[ProfileLibrary, Path, Path]:
    """A library reading ``tmp_path/home/agents`` (user) and ``tmp_path/project`` (project)."""
    home, project = tmp_path / "home", tmp_path / "project"
    made = ProfileLibrary(environ=environ(tmp_path), cwd=project)
    return made, home / "agents", project / ".agent-host" / "agents"


@attrs.frozen
class Dirs:
    """Where a test host's profiles and memories live."""

    home: Path  # AGENT_HOST_HOME
    project: Path  # the working directory
    claude_home: Path  # HOME

    @property
    def user(self) -> Path:
        return self.home / "agents"

    @property
    def project_agents(self) -> Path:
        return self.project / ".agent-host" / "agents"


def profile_host(
    tmp_path: Path,
    *plugins: Any,
    data: str = "data",
    config: Mapping[str, Any] | None = None,
) -> tuple[Host, Dirs]:
    """A started host with the delegation plugin whose profiles are read from tmp_path (the
    same directories for every host made for one test: a second one is a restart)."""
    host = build_host(
        ("subagent", agent_host_subagent), *plugins, data_dir=tmp_path / data, config=config
    )
    host.profiles.environ = environ(tmp_path)
    host.profiles.cwd = tmp_path / "project"
    return host, Dirs(tmp_path / "home", tmp_path / "project", tmp_path / "real-home")


async def settle(host: Host, child_id: str, *agents: Any) -> None:
    """Wait until a background child has settled and ``agents`` are idle."""
    activation = host.services.subagents.manager().activation(child_id)
    if activation is not None:
        await activation.wait_done()
    for agent in agents:
        await agent.wait_idle()


def seen(model: ScriptedModel, label: str, index: int = 0) -> tuple[list[str], str]:
    """The tool names and the system prompt of ``label``'s request ``index`` (its first)."""
    request = model.requests_for(label)[index]
    return [t.name for t in request.tools], request.system_prompt


async def delegate(host: Host, root: Any, label: str, profile: str, background: bool = False):
    """Start a child of ``profile`` through the delegation tool (its label is ``label``);
    in the foreground the result holds its answer."""
    args = {
        "description": label,
        "prompt": f"Do {label}.",
        "subagent_type": profile,
        "run_in_background": background,
    }
    result = await call_tool(host, "subagent", args, agent=root)
    assert not result.is_error, result.text
    return result
