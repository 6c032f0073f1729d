"""write_file, edit_file and run_command from a child at depth 2 ask the root's user, once,
through the approvals route: denied, nothing changes; approved, the change is made once. An
edit that cannot apply (old text absent or not unique) is refused only once approved: denied,
the tool never runs."""

from __future__ import annotations

from typing import Any

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


REFUSED_EDITS: dict[str, tuple[dict[str, object], str]] = {
    "absent": (
        {"path": "src/notes.txt", "old": "fourth", "new": "4th"},
        "src/notes.txt: old text not found; nothing changed",
    ),
    "not unique": (
        {"path": "src/app.py", "old": "o", "new": "0"},  # "import os"
        "src/app.py: old text occurs 2 times; give more context to make it unique, or "
        "replace_all=true; nothing changed",
    ),
}


def edits_tried(monkeypatch) -> list[tuple[Any, ...]]:
    """The arguments of each edit the tool itself works out from now on."""
    from agent_host_workspace import writing

    tried: list[tuple[Any, ...]] = []
    real = writing.edit_text

    def edit_text(*args: Any) -> str:
        tried.append(args[1:])
        return real(*args)

    monkeypatch.setattr(writing, "edit_text", edit_text)
    return tried


@pytest.mark.parametrize("case", list(REFUSED_EDITS))
async def test_an_approved_edit_that_cannot_apply_is_refused_and_writes_nothing(
    tree, workspace, monkeypatch, case
):
    args, refusal = REFUSED_EDITS[case]
    before = (tree.root / str(args["path"])).read_bytes()
    tried = edits_tried(monkeypatch)
    h = workspace(delegation=True)
    await run_at_depth_two(h, "edit_file", args)
    (request,) = h.approvals.asked
    assert (request.tool, request.arguments, request.origin.depth) == ("edit_file", args, 2)
    assert len(tried) == 1  # asked first, then worked out once
    (level_two,) = h.model.requests_for("level two")[-1:]
    assert level_two.messages[-1].content == refusal
    assert (tree.root / str(args["path"])).read_bytes() == before


@pytest.mark.parametrize("case", list(REFUSED_EDITS))
async def test_a_denied_edit_that_could_not_apply_is_never_worked_out(
    tree, workspace, monkeypatch, case
):
    args, _ = REFUSED_EDITS[case]
    before = (tree.root / str(args["path"])).read_bytes()
    tried = edits_tried(monkeypatch)
    h = workspace(delegation=True)
    h.approvals.answer(Answer.deny("not now"))
    await run_at_depth_two(h, "edit_file", args)
    assert [request.tool for request in h.approvals.asked] == ["edit_file"]
    assert tried == []  # the refusal is never computed: the tool did not run
    (level_two,) = h.model.requests_for("level two")[-1:]
    assert level_two.messages[-1].content == "the user denied edit_file: not now"
    assert (tree.root / str(args["path"])).read_bytes() == before
