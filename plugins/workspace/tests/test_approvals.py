"""write_file, edit_file and run_command from a child at depth 2 ask the root's user, once,
through the approvals route: denied, nothing changes; approved, the change is made once."""

from __future__ import annotations

import pytest

from host.agents.agent import Agent
from host.testing import Answer, call, say

CASES: dict[str, tuple[dict[str, object], str, str]] = {
    "write_file": ({"path": "out.txt", "content": "one\n"}, "out.txt", "one\n"),
    "edit_file": (
        {"path": "src/notes.txt", "old": "second", "new": "2nd"},
        "src/notes.txt",
        "first\n2nd needle\nthird\n",
    ),
    "run_command": ({"command": "echo ran >> ran.txt", "shell": True}, "ran.txt", "ran\n"),
}


async def run_at_depth_two(h, tool: str, args: dict[str, object]) -> Agent:
    """The root delegates to "level one", which delegates to "level two", which calls
    ``tool``; each waits in the foreground. The root agent, once idle."""
    h.model.script(
        "root",
        call("subagent", description="level one", prompt="Delegate.", run_in_background=False),
        say("done"),
    )
    h.model.script(
        "level one",
        call("subagent", description="level two", prompt="Change.", run_in_background=False),
        say("delegated"),
    )
    h.model.script("level two", call(tool, **args), say("tried"))
    root = await h.root("root")
    root.followup("go")
    await root.wait_idle()
    return root


@pytest.mark.parametrize("tool", list(CASES))
async def test_a_denied_change_asks_the_root_once_and_changes_nothing(tree, workspace, tool):
    args, path, _ = CASES[tool]
    before = (tree.root / path).read_bytes() if (tree.root / path).exists() else None
    h = workspace(delegation=True)
    h.approvals.answer(Answer.deny("not now"))
    root = await run_at_depth_two(h, tool, args)
    (request,) = h.approvals.asked
    assert (request.tool, request.arguments, request.root_id) == (tool, args, root.id)
    assert (request.origin.depth, request.origin.label) == (2, "level two")
    after = (tree.root / path).read_bytes() if (tree.root / path).exists() else None
    assert after == before
    (level_two,) = h.model.requests_for("level two")[-1:]
    assert level_two.messages[-1].content == f"the user denied {tool}: not now"


@pytest.mark.parametrize("tool", list(CASES))
async def test_an_approved_change_is_made_once(tree, workspace, tool):
    args, path, content = CASES[tool]
    h = workspace(delegation=True)
    await run_at_depth_two(h, tool, args)
    (request,) = h.approvals.asked
    assert (request.tool, request.origin.depth) == (tool, 2)
    assert (tree.root / path).read_text() == content


async def test_the_read_tools_never_ask(tree, workspace):
    h = workspace(delegation=True)
    h.model.script(
        "root",
        call("subagent", description="reader", prompt="Read.", run_in_background=False),
        say("done"),
    )
    h.model.script(
        "reader",
        call("read_file", path="src/notes.txt"),
        call("list_files", glob="*.py"),
        call("grep", pattern="needle"),
        say("read"),
    )
    root = await h.root("root")
    root.followup("go")
    await root.wait_idle()
    assert h.approvals.asked == []
