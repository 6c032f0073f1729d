"""Store and registry fixtures shared by the unit suites (agents, sessions, continuable setup).

A conftest imports them (``from tests.fixtures import *``, or by name) and a conftest or test
module overrides the ones it needs different by defining a fixture of the same name.

* ``data_dir``: an empty ``sessions`` directory in ``tmp_path``;
* ``persistence`` / ``store``: real JSONL persistence over ``data_dir`` and a ``SessionStore``;
* ``model`` / ``models``: a ``ScriptedModel`` registered as ``"scripted"``;
* ``global_tools`` (``echo``) / ``global_sections``: the global registries;
* ``agent_ctx``: the service context the agents pass to tools (``NoServices``: it finds no
  service, and compares as ``{"name": "ctx"}``);
* ``agents``: an ``AgentRegistry`` over all of the above, every agent disposed afterwards.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from host.agents import AgentRegistry, ModelRegistry, ScriptedModel, section_registry
from host.agents.prompt import PromptSection
from host.naming import NamedRegistry
from host.sessions.jsonl import JsonlPersistence
from host.sessions.projections import Projections
from host.sessions.store import SessionStore
from host.tools import Tool
from host.tools.scope import tool_registry
from tests.agents.helpers import echo

__all__ = [
    "agent_ctx",
    "agents",
    "data_dir",
    "global_sections",
    "global_tools",
    "model",
    "models",
    "persistence",
    "store",
]


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "sessions"
    directory.mkdir()
    return directory


@pytest.fixture
def persistence(data_dir: Path) -> JsonlPersistence:
    return JsonlPersistence(data_dir)


@pytest.fixture
def store(persistence: JsonlPersistence) -> SessionStore:
    return SessionStore(persistence, Projections())


@pytest.fixture
def model() -> ScriptedModel:
    return ScriptedModel()


@pytest.fixture
def models(model: ScriptedModel) -> ModelRegistry:
    registry = ModelRegistry()
    registry.register("scripted", model, owner="test")
    return registry


@pytest.fixture
def global_tools() -> NamedRegistry[Tool]:
    tools = tool_registry()
    tools.register("echo", echo, owner="test")
    return tools


@pytest.fixture
def global_sections() -> NamedRegistry[PromptSection]:
    return section_registry()


class NoServices(dict[str, str]):
    """A service context with no service in it (the agents' ``ctx`` looks services up with
    ``find``); a dict, so that a test can tell it from another by its items."""

    def find(self, name: str) -> None:
        """Nothing, whatever ``name``."""
        return None


@pytest.fixture
def agent_ctx() -> Any:
    return NoServices(name="ctx")


@pytest.fixture
async def agents(
    store: SessionStore,
    models: ModelRegistry,
    global_tools: NamedRegistry[Tool],
    global_sections: NamedRegistry[PromptSection],
    agent_ctx: Any,
) -> AsyncIterator[AgentRegistry]:
    registry = AgentRegistry(store, models, global_tools, global_sections, ctx=agent_ctx)
    yield registry
    await registry.dispose_all()
