"""``list_agents`` shows a child blocked on a request to the user as ``waiting``: live (the
service knows it) and after a restart (the root's log holds the request, undecided), until a
``send_message`` resumes the child, which asks again."""

from __future__ import annotations

import shutil
from pathlib import Path

from host.agents import call, say
from host.approvals.requests import Answer
from host.subagents.types import ChildRequest
from tests.approvals.test_resume import asked_again
from tests.approvals.test_service import RAN, Asker, service, shell
from tests.reliability.hosts import Tree
from tests.support import soon


async def blocked(tree: Tree) -> tuple[str, str]:
    """A root ``R`` whose continuable child ``asker`` waits for approval of ``shell``: the
    root's and the child's ids."""
    tree.host.tools.register("shell", shell, owner="test")
    tree.model.script("asker", call("shell", cmd="make clean"), say("cleaned"))
    root = await tree.root("R")
    started = await tree.subagents.start_continuable(
        "spawn", ChildRequest(prompt="clean up"), parent=root, label="asker"
    )
    assert await soon(lambda: service(tree).pending())
    return root.id, started.child_id


async def test_a_child_blocked_on_a_request_is_waiting_live_and_after_a_restart(
    tmp_path: Path,
) -> None:
    RAN.clear()
    first = Tree(tmp_path / "data")
    try:
        root_id, child_id = await blocked(first)
        root = first.agents.get(root_id)
        listed = await first.tool("list_agents", {}, root)
        assert listed.text == f"{child_id} [waiting] — asker"
        assert listed.structured[0]["status"] == "waiting"
        (before,) = service(first).pending()
        crashed = tmp_path / "crashed"
        shutil.copytree(first.data_dir, crashed)  # what a SIGKILL now would leave
    finally:
        await first.aclose()
    second = Tree(crashed)
    try:
        asker = Asker(Answer.approve())
        service(second).on_request(asker)
        second.host.tools.register("shell", shell, owner="test")
        second.model.script("asker", say("cleaned after all"))
        root = await second.agents.resume(root_id, label="R")
        listed = await second.tool("list_agents", {"scope": "descendants"}, root)
        assert listed.text == f"{child_id} [waiting] parent={root_id} depth=1 — asker"
        sent = await second.tool(
            "send_message", {"subagent_id": child_id, "message": "go on"}, root
        )
        assert sent.text == f"message queued as the next turn for subagent {child_id}"
        await second.settled(child_id)
        asked_again(asker, before, root_id)
        assert RAN == ["make clean"]
        listed = await second.tool("list_agents", {}, root)
        assert listed.text == f"{child_id} [ready] — asker"
    finally:
        await second.aclose()
