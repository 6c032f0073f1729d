"""Fixtures for the control tool tests: a real host with the control and delegation plugins.

``Ctl`` is a host made by ``build_host`` from every built-in plugin plus the root plugin
(``subagent_control``), the list plugin (``list_agents``) and the delegation plugin
(``subagent``), with JSONL persistence in ``tmp_path`` and the scripted model. Children are
started through the real ``subagent`` tool; the control tools are called with
``call_tool(..., agent=<a live Agent>)``. Nothing waits on time: tests await gates, turn ends
and Activations.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import agent_host_subagent
import pytest

from host.agents import Agent, ScriptedModel
from host.app import Host
from host.sessions.model import (
    Event,
    InboxAccepted,
    MessageEvent,
    SessionHeader,
    SubagentDescriptorEvent,
    TurnEnd,
    TurnStart,
)
from host.subagents.manager import ContinuationManager
from host.subagents.service import SubagentService
from host.testing import build_host, call_tool
from host.tools import ToolResult
from tool_subagent_control import listing, root

CONTROL_PLUGINS = (
    ("subagent_control", root),
    ("list_agents", listing),
    ("subagent", agent_host_subagent),
)
"""The plugins under test, named as their entry points are."""

TWO_DELEGATION_TOOLS = {
    "plugins": {
        "subagent": {
            "tools": [
                {"name": "subagent", "provider": "spawn"},
                {"name": "subagent_fork", "provider": "fork"},
            ]
        }
    }
}


class Ctl:
    """One real host over ``data_dir`` and handles on its services."""

    def __init__(
        self,
        data_dir: Path,
        *,
        config: Mapping[str, Any] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.data_dir = data_dir
        self.host: Host = build_host(
            *CONTROL_PLUGINS, data_dir=data_dir, config=config, environ=environ
        )
        self.services = self.host.services

    # -- services ------------------------------------------------------------------------

    @property
    def model(self) -> ScriptedModel:
        model = self.services.models.resolve("scripted")
        assert isinstance(model, ScriptedModel)
        return model

    @property
    def agents(self) -> Any:
        return self.services.agents

    @property
    def subagents(self) -> SubagentService:
        service = self.services.subagents
        assert isinstance(service, SubagentService)
        return service

    @property
    def manager(self) -> ContinuationManager:
        manager = self.subagents.manager()
        assert manager is not None
        return manager

    # -- agents and tools ------------------------------------------------------------------

    async def root(self, label: str = "root") -> Agent:
        agent: Agent = await self.agents.create(label=label)
        return agent

    async def call(self, name: str, args: Any, agent: Any) -> ToolResult:
        return await call_tool(self.host, name, args, agent=agent)

    async def start(
        self, parent: Agent, label: str, prompt: str = "work", tool: str = "subagent"
    ) -> str:
        """Start a continuable child of ``parent`` through the real delegation tool."""
        result = await self.call(tool, {"description": label, "prompt": prompt}, parent)
        assert not result.is_error, result.text
        assert result.text == f"started subagent {result.structured['subagent_id']}"
        child_id: str = result.structured["subagent_id"]
        return child_id

    async def start_one_shot(self, parent: Agent, label: str, prompt: str = "once") -> str:
        """Run a one-shot child of ``parent`` in the foreground to its end."""
        result = await self.call(
            "subagent",
            {"description": label, "prompt": prompt, "run_in_background": False},
            parent,
        )
        assert not result.is_error, result.text
        child_id: str = result.structured["subagent_id"]
        return child_id

    async def settled(self, child_id: str, *parents: Agent) -> None:
        """Wait until ``child_id`` is no longer resident, then until ``parents`` are idle."""
        activation = self.manager.activation(child_id)
        if activation is not None:
            await activation.wait_done()
        for parent in parents:
            await parent.wait_idle()

    # -- storage -----------------------------------------------------------------------------

    def session_files(self) -> dict[str, bytes]:
        """Every session log in the data directory, by id, with its bytes."""
        return {p.stem: p.read_bytes() for p in sorted(self.data_dir.glob("*.jsonl"))}

    async def stored(self, session_id: str) -> list[Event]:
        """The events of a stored session (a read-only ``inspect``)."""
        stored = await self.services.session_persistence.inspect(session_id)
        return list(stored.events)

    def write_child(self, session_id: str, parent_id: str, descriptor: Any) -> SessionHeader:
        """A settled subagent child of ``parent_id`` written through the real store, its one
        own descriptor being ``descriptor`` (which may be garbage)."""
        store = self.services.sessions
        header = SessionHeader(id=session_id, parent_session=parent_id, origin="subagent")
        session = store.new(header)
        store.publish(session)
        session.append(SubagentDescriptorEvent(descriptor))
        session.append(MessageEvent(role="user", content="hello"))
        store.release(session_id)
        return header

    async def aclose(self) -> None:
        await self.host.aclose()


@pytest.fixture(name="ctl")
async def ctl_fixture(tmp_path: Path) -> AsyncIterator[Ctl]:
    made = Ctl(tmp_path / "data")
    yield made
    await made.aclose()


def bodies(events: Any, kind: type) -> list[Any]:
    return [e.body for e in events if isinstance(e.body, kind)]


def accepted(events: Any) -> list[InboxAccepted]:
    return bodies(events, InboxAccepted)


def turn_count(events: Any) -> int:
    return len(bodies(events, TurnStart))


def stop_reasons(events: Any) -> list[str]:
    return [end.stop_reason for end in bodies(events, TurnEnd)]
