"""The harness of the control tool tests: a real host with the control and delegation plugins.

``Ctl`` is a ``HostHarness`` (``host.testing``) of every built-in plugin plus the root plugin
(``subagent_control``), the list plugin (``list_agents``) and the delegation plugin
(``subagent``), with JSONL persistence in ``tmp_path`` and the scripted model. Children are
started through the real ``subagent`` tool; the control tools are called with
``call_tool(..., agent=<a live Agent>)``. Nothing waits on time: tests await gates, turn ends
and child activations.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import agent_host_subagent

from host.agents import Agent
from host.sessions.model import (
    MessageEvent,
    SessionHeader,
    SubagentDescriptorEvent,
)
from host.testing import HostHarness, MakeHarness
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


class Ctl(HostHarness):
    """A harness of the control plugins over ``data_dir``; children start through the real
    delegation tool."""

    def __init__(
        self,
        data_dir: Path,
        *,
        config: Mapping[str, Any] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(*CONTROL_PLUGINS, data_dir=data_dir, config=config, environ=environ)

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


def make_ctl(tmp_path: Path, make_harness: MakeHarness) -> Ctl:
    """A ``Ctl`` over ``tmp_path / "data"``, closed after the test."""
    made = make_harness(cls=Ctl, data_dir=tmp_path / "data")
    assert isinstance(made, Ctl)
    return made
