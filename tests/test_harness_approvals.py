"""The harness answers approval requests (``h.approvals``), so a test of an approval-gated tool
needs no user and no timeout; the scripted model's entries come typed from ``host.testing``."""

from __future__ import annotations

from collections.abc import Callable

from host.approvals.requests import ApprovalRequest
from host.sessions.model import MessageEvent
from host.testing import Answer, HostHarness, call, say
from host.tools import tool
from tests.support import bodies


@tool(needs_approval=True)
async def erase(path: str) -> str:
    """Erase a file.

    Args:
        path: Which file.
    """
    return f"erased {path}"


async def tool_texts(
    h: HostHarness, answer: Answer | Callable[[ApprovalRequest], Answer]
) -> list[str]:
    h.add_tool(erase)
    h.approvals.answer(answer)
    h.model.script("w", call("erase", path="a.txt"), say("done"))
    agent = await h.root("w")
    agent.followup("erase a.txt")
    await agent.wait_idle()
    return [m.content for m in bodies(agent, MessageEvent) if m.role == "tool"]


async def test_an_approved_call_runs_and_the_request_is_kept(harness: HostHarness) -> None:
    assert await tool_texts(harness, Answer.approve()) == ["erased a.txt"]
    assert [(r.tool, r.arguments) for r in harness.approvals.asked] == [
        ("erase", {"path": "a.txt"})
    ]


async def test_a_denied_call_is_the_denial_the_model_sees(harness: HostHarness) -> None:
    assert await tool_texts(harness, Answer.deny("not today")) == [
        "the user denied erase: not today"
    ]


async def test_a_function_of_the_request_decides_each(harness: HostHarness) -> None:
    texts = await tool_texts(harness, lambda request: Answer.deny(request.tool))
    assert texts == ["the user denied erase: erase"]
