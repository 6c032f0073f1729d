"""Fixtures of the app-server tests: a project directory with a script and an approval policy,
and clients of real ``agent-host app-server`` subprocesses (closed after the test)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.appserver.client import Client, Schemas
from tests.cli.conftest import server  # noqa: F401  (the model server fixture)
from tests.cli.support import AGENT_HOST

TREE_SCRIPT = {
    "user": [
        {
            "text": "Starting research.",
            "tool_calls": [
                {"name": "subagent", "arguments": {"description": "research", "prompt": "Look."}}
            ],
        },
        "Research is running.",
    ],
    "research": [
        {
            "tool_calls": [
                {
                    "name": "subagent",
                    "arguments": {
                        "description": "deep",
                        "prompt": "Dig.",
                        "run_in_background": False,
                    },
                }
            ]
        },
        {"tool_calls": [{"name": "report", "arguments": {"output": "Found it."}}]},
        "Research done.",
    ],
    "deep": [{"tool_calls": [{"name": "list_agents", "arguments": {}}]}, "Dug."],
}
"""The root starts a background child, which starts a foreground grandchild (depth 2) whose
``list_agents`` call the policy sends to the user; the child then reports and settles."""

ASKING_ROOT_SCRIPT = {
    "user": [{"tool_calls": [{"name": "list_agents", "arguments": {}}]}, "Listed."],
}
"""The root itself calls a tool the policy asks about."""


def project(path: Path, script: dict[str, Any], policy: str = "") -> Path:
    """``path`` with ``script.json`` and an ``agent-host.toml`` asking for ``list_agents``
    (``policy``: more lines of its ``[approvals]``)."""
    (path / "script.json").write_text(json.dumps(script))
    (path / "agent-host.toml").write_text(f'[approvals]\nask = ["list_agents"]\n{policy}')
    (path / "home").mkdir(exist_ok=True)
    return path / "script.json"


@pytest.fixture(scope="session")
def schemas(tmp_path_factory: pytest.TempPathFactory) -> Schemas:
    """The schema files ``agent-host app-server schema --out DIR`` writes, as validators."""
    out = tmp_path_factory.mktemp("schema")
    subprocess.run(
        [AGENT_HOST, "--data-dir", str(out / "data"), "app-server", "schema", "--out", str(out)],
        check=True, capture_output=True, timeout=60, cwd=out,
    )
    return Schemas(out)


@pytest.fixture
def clients(tmp_path: Path, schemas: Schemas) -> Iterator[Callable[..., Client]]:
    """Start clients in ``tmp_path`` (``client(script=…)``), every message they read checked
    against the protocol's schema; each is killed after the test."""
    started: list[Client] = []

    def start(
        *args: str,
        script: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
        policy: str = "",
    ) -> Client:
        wanted = script is not None or env is None
        path = project(tmp_path, script or TREE_SCRIPT, policy) if wanted else None
        made = Client(tmp_path, *args, script=path, schemas=schemas, env=env)
        started.append(made)
        return made

    yield start
    for client in started:
        if client.process.poll() is None:
            client.kill()
