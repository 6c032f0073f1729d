"""Shared helpers for the subagent service tests (no tests here).

``Env`` is a ``HostHarness`` (``host.testing``: a real host of every built-in plugin, JSONL
persistence in tmp_path, the scripted model); test tools (``tests.scenarios``) call the service
the way the tool packages do. Nothing is mocked and nothing waits on time: tests await
Activations, turn ends and gates.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from host.agents import Agent, say
from host.sessions.model import SubagentDescriptorEvent
from host.subagents.service import SubagentService
from host.subagents.types import ChildRequest
from host.testing import HostHarness, MakeHarness
from host.tools import Tool, ToolExec, tool
from tests.scenarios import (  # noqa: F401 - re-exported for the service tests
    Stubborn,
    TextArgs,
    background_tool,
    user_messages,
)
from tests.support import accepted  # noqa: F401 - re-exported for the service tests


def report_tool(delivery: str = "next-step") -> Tool:
    """A ``report`` tool like the report package's: reports ``text`` to the direct parent."""

    @tool("report", "Report to your parent.", TextArgs)
    async def run(args: TextArgs, exec: ToolExec) -> str:
        service: SubagentService = exec.ctx.subagents
        message_id = await service.report_from(exec.agent, args.text, delivery=delivery)  # type: ignore[arg-type]
        return f"report accepted as message {message_id}"

    return run


class Env(HostHarness):
    """A harness of the built-in plugins over ``data_dir``."""

    def __init__(self, data_dir: Path, environ: dict[str, str] | None = None) -> None:
        super().__init__(data_dir=data_dir, environ=environ)

    async def settled_child(self, label: str = "bg") -> tuple[Agent, str]:
        """A root and a continuable child (``label``) that answered once and settled."""
        root = await self.root()
        self.model.script(label, say("first"))
        started = await self.subagents.start_continuable(
            "spawn", ChildRequest("task"), parent=root, label=label
        )
        await self.settled(started.child_id, root)
        return root, started.child_id


def release_stubborn() -> None:
    """Release every ``Stubborn`` tool (never let a failed test hang the shutdown)."""
    for stubborn in Stubborn.made:
        stubborn.release.set()


@pytest.fixture(name="env")
def env_fixture(tmp_path: Path, make_harness: MakeHarness) -> Env:
    """An ``Env`` over ``tmp_path / "data"``, closed (and unstuck) after the test."""
    made = make_harness(cls=Env, data_dir=tmp_path / "data")
    assert isinstance(made, Env)
    made.on_close(release_stubborn)
    return made


def descriptor_seqs(events: Any) -> list[int]:
    return [e.seq for e in events if isinstance(e.body, SubagentDescriptorEvent)]
