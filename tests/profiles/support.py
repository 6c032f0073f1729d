"""Writing profile files for tests."""

from __future__ import annotations

from pathlib import Path

from host.profiles.library import ProfileLibrary


def write(directory: Path, file: str, name: str, description: str = "d", **fields: str) -> Path:
    """A profile file ``directory/file`` with the given front-matter fields and a persona."""
    directory.mkdir(parents=True, exist_ok=True)
    lines = ["---", f"name: {name}", f"description: {description}"]
    persona = fields.pop("persona", f"You are {name}.")
    lines += [f"{key}: {value}" for key, value in fields.items()]
    path = directory / file
    path.write_text("\n".join([*lines, "---", persona, ""]), encoding="utf-8")
    return path


def library(tmp_path: Path) -> tuple[ProfileLibrary, Path, Path]:
    """A library reading ``tmp_path/home/agents`` (user) and ``tmp_path/project`` (project)."""
    home, project = tmp_path / "home", tmp_path / "project"
    made = ProfileLibrary(environ={"AGENT_HOST_HOME": str(home)}, cwd=project)
    return made, home / "agents", project / ".agent-host" / "agents"
