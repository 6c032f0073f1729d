"""Fixtures for the agent tests: a real session store on JSONL files, a scripted model, tools."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from host.agents import (
    AgentRegistry,
    ModelRegistry,
    ScriptedModel,
    section_registry,
)
from host.agents.prompt import PromptSection
from host.naming import NamedRegistry
from host.sessions.jsonl import JsonlPersistence
from host.sessions.projections import Projections
from host.sessions.store import SessionStore
from host.tools import Tool
from host.tools.scope import tool_registry
from tests.agents.helpers import echo


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


@pytest.fixture
async def agents(
    store: SessionStore,
    models: ModelRegistry,
    global_tools: NamedRegistry[Tool],
    global_sections: NamedRegistry[PromptSection],
) -> AsyncIterator[AgentRegistry]:
    registry = AgentRegistry(store, models, global_tools, global_sections, ctx={"name": "ctx"})
    yield registry
    await registry.dispose_all()
