"""``list_agents`` end to end over real children, diagnostics, errors and signal forwarding."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest

from host.agents import Agent, call, say
from host.cancel import CancelSignal
from host.sessions.model import MessageEvent
from host.tools import ToolExec, ToolResult
from host.tools.execute import run_tool
from tests.subagents.control import TWO_DELEGATION_TOOLS, Ctl
from tests.support import Gate
from tool_subagent_control import listing

CORRUPT = {"version": 2, "mode": "bogus", "secret": "hunter2"}
NEWER = {"version": 9, "mode": "continuable", "provider": "spawn", "label": "from the future"}


@attrs.define
class Family:
    """root: alpha (settled, continuable), once (one-shot, which started orphan), branch
    (resident, waiting) → grand (running), broken (corrupt), newer (unsupported)."""

    root: Agent
    alpha: str
    once: str
    orphan: str
    branch: str
    grand: str
    gate: Gate


async def family(ctl: Ctl) -> Family:
    root = await ctl.root()
    ctl.model.script("alpha", say("alpha done"))
    alpha = await ctl.start(root, "alpha")
    await ctl.settled(alpha, root)
    ctl.model.script("once", call("subagent", description="orphan", prompt="x"), say("once done"))
    ctl.model.script("orphan", say("orphan done"))
    once = await ctl.start_one_shot(root, "once")
    (orphan,) = [
        m.structured["subagent_id"]
        for m in (e.body for e in await ctl.stored_events(once))
        if isinstance(m, MessageEvent) and m.role == "tool" and m.structured
    ]
    await ctl.settled(orphan)
    gate = Gate()
    ctl.model.script("branch", call("subagent", description="grand", prompt="deep"), say("waits"))
    ctl.model.script("grand", gate.reply(say("grand done")))
    branch = await ctl.start(root, "branch")
    await gate.entered.wait()
    await ctl.agents.get(branch).wait_idle()
    (grand,) = ctl.manager.activation(branch).children
    ctl.write_child("broken", root.id, CORRUPT)
    ctl.write_child("newer", root.id, NEWER)
    await root.wait_idle()
    return Family(root, alpha, once, orphan, branch, grand, gate)


async def finish(ctl: Ctl, fam: Family) -> None:
    fam.gate.open()
    await ctl.settled(fam.grand)
    await ctl.settled(fam.branch, fam.root)


async def listed(ctl: Ctl, agent: Agent, **args: Any) -> ToolResult:
    result = await ctl.call("list_agents", args, agent)
    assert not result.is_error, result.text
    return result


async def test_children_scope_over_real_children(ctl: Ctl) -> None:
    fam = await family(ctl)
    assert ctl.agents.status(fam.branch) == "idle"
    assert ctl.agents.status(fam.grand) == "running"
    for args in ({}, {"scope": "children"}):  # missing scope resolves to children
        result = await listed(ctl, fam.root, **args)
        assert result.text == "\n".join(
            [
                f"{fam.alpha} [ready] — alpha",
                f"{fam.branch} [idle] — branch",
                "broken [diagnostic: corrupt]",
                "newer [diagnostic: unsupported]",
            ]
        )
        assert result.structured == [
            {"kind": "child", "id": fam.alpha, "label": "alpha", "status": "ready"},
            {"kind": "child", "id": fam.branch, "label": "branch", "status": "idle"},
            {"kind": "diagnostic", "id": "broken", "reason": "corrupt"},
            {"kind": "diagnostic", "id": "newer", "reason": "unsupported"},
        ]
        assert "hunter2" not in result.text and "bogus" not in result.text
        assert "from the future" not in result.text
    # the branch sees its own running child
    branch = ctl.agents.get(fam.branch)
    result = await listed(ctl, branch)
    assert result.text == f"{fam.grand} [running] — grand"
    assert result.structured == [
        {"kind": "child", "id": fam.grand, "label": "grand", "status": "running"}
    ]
    await finish(ctl, fam)


async def test_descendants_scope_is_a_positioned_pre_order(ctl: Ctl) -> None:
    fam = await family(ctl)
    root_id = fam.root.id
    result = await listed(ctl, fam.root, scope="descendants")
    assert result.text == "\n".join(
        [
            f"{fam.alpha} [ready] parent={root_id} depth=1 — alpha",
            f"{fam.orphan} [ready] parent={fam.once} depth=2 — orphan",
            f"{fam.branch} [idle] parent={root_id} depth=1 — branch",
            f"{fam.grand} [running] parent={fam.branch} depth=2 — grand",
            f"broken [diagnostic: corrupt] parent={root_id} depth=1",
            f"newer [diagnostic: unsupported] parent={root_id} depth=1",
        ]
    )
    assert result.structured == [
        {
            "kind": "child",
            "id": fam.alpha,
            "label": "alpha",
            "status": "ready",
            "parent": root_id,
            "depth": 1,
        },
        {
            "kind": "child",
            "id": fam.orphan,
            "label": "orphan",
            "status": "ready",
            "parent": fam.once,
            "depth": 2,
        },
        {
            "kind": "child",
            "id": fam.branch,
            "label": "branch",
            "status": "idle",
            "parent": root_id,
            "depth": 1,
        },
        {
            "kind": "child",
            "id": fam.grand,
            "label": "grand",
            "status": "running",
            "parent": fam.branch,
            "depth": 2,
        },
        {"kind": "diagnostic", "id": "broken", "reason": "corrupt", "parent": root_id, "depth": 1},
        {
            "kind": "diagnostic",
            "id": "newer",
            "reason": "unsupported",
            "parent": root_id,
            "depth": 1,
        },
    ]
    assert fam.once not in [row["id"] for row in result.structured]  # one-shot omitted
    await finish(ctl, fam)


async def test_listing_writes_no_session_and_resumes_nothing(ctl: Ctl) -> None:
    fam = await family(ctl)
    before = ctl.session_files()
    requests = len(ctl.model.requests)
    await listed(ctl, fam.root)
    await listed(ctl, fam.root, scope="descendants")
    assert ctl.session_files() == before
    assert ctl.agents.get(fam.alpha) is None
    assert len(ctl.model.requests) == requests
    await finish(ctl, fam)


async def test_a_ready_child_listed_is_resumed_by_send_message(ctl: Ctl) -> None:
    root = await ctl.root()
    gate = Gate()
    ctl.model.script("alpha", say("alpha done"), gate.reply(say("again")))
    alpha = await ctl.start(root, "alpha")
    await ctl.settled(alpha, root)
    result = await listed(ctl, root)
    assert result.text == f"{alpha} [ready] — alpha"
    sent = await ctl.call("send_message", {"subagent_id": alpha, "message": "more"}, root)
    assert not sent.is_error
    await gate.entered.wait()
    assert (await listed(ctl, root)).text == f"{alpha} [running] — alpha"
    gate.open()
    await ctl.settled(alpha, root)
    assert (await listed(ctl, root)).text == f"{alpha} [ready] — alpha"


async def test_nothing_left_is_no_subagents(ctl: Ctl) -> None:
    root = await ctl.root()
    for scope in ("children", "descendants"):
        result = await listed(ctl, root, scope=scope)
        assert (result.text, result.structured) == ("(no subagents)", [])
    ctl.model.script("once", say("done"))
    await ctl.start_one_shot(root, "once")  # a one-shot child alone leaves nothing
    for scope in ("children", "descendants"):
        result = await listed(ctl, root, scope=scope)
        assert (result.text, result.structured) == ("(no subagents)", [])


async def run_direct(ctl: Ctl, agent: Agent, args: Any, signal: CancelSignal) -> ToolResult:
    exec = ToolExec(agent=agent, ctx=ctl.services, signal=signal)
    return await run_tool(listing.list_agents, "list_agents", args, exec)


@pytest.mark.parametrize("scope", ["children", "descendants"])
async def test_the_callers_signal_is_forwarded(ctl: Ctl, scope: str) -> None:
    root = await ctl.root()
    ctl.model.script("alpha", say("alpha done"))
    alpha = await ctl.start(root, "alpha")
    await ctl.settled(alpha, root)
    signal = CancelSignal()
    signal.set("stop listing")
    result = await run_direct(ctl, root, {"scope": scope}, signal)
    assert result.is_error
    assert result.text == "list_agents failed (CANCELLED): stop listing"
    assert alpha not in result.text
    result = await run_direct(ctl, root, {"scope": scope}, CancelSignal())
    assert result.text.startswith(f"{alpha} [ready]")


async def test_projections_blocked_is_an_error_result(tmp_path: Path) -> None:
    ctl = Ctl(tmp_path / "data", environ={"AGENT_HOST_DISABLE_PLUGINS": "projections"})
    try:
        assert ctl.host.plugins.records["list_agents"].state == "active"
        root = await ctl.root()
        for scope in ("children", "descendants"):
            result = await ctl.call("list_agents", {"scope": scope}, root)
            assert result.is_error
            assert result.text == (
                "list_agents failed (SUBAGENT_CONTROL_PROJECTIONS_UNAVAILABLE): "
                "listing subagents requires the projections service"
            )
    finally:
        await ctl.close()


async def test_session_store_gone_is_an_error_result(ctl: Ctl) -> None:
    root = await ctl.root()
    ctl.host.plugins.block("sessions")
    assert ctl.host.plugins.records["list_agents"].state == "inactive"
    assert ctl.host.tools.get("list_agents") is None
    assert ctl.host.tools.get("send_message") is not None  # the root plugin stays
    for scope in ("children", "descendants"):
        result = await run_direct(ctl, root, {"scope": scope}, CancelSignal())
        assert result.is_error
        assert result.text == (
            "list_agents failed (SUBAGENT_CONTROL_SESSION_STORE_UNAVAILABLE): "
            "listing subagents requires the sessions service"
        )
    ctl.host.plugins.unblock("sessions")
    assert ctl.host.plugins.records["list_agents"].state == "active"


async def test_fork_seeded_children_are_listed_by_their_own_descriptor(tmp_path: Path) -> None:
    ctl = Ctl(tmp_path / "data", config=TWO_DELEGATION_TOOLS)
    try:
        root = await ctl.root()
        gate = Gate()
        ctl.model.script(
            "mid", call("subagent_fork", description="grand", prompt="deep"), say("waits")
        )
        ctl.model.script("grand", gate.reply(say("grand done")))
        mid = await ctl.start(root, "mid", tool="subagent_fork")
        await gate.entered.wait()
        await ctl.agents.get(mid).wait_idle()
        (grand,) = ctl.manager.activation(mid).children
        # the grandchild's fork seed holds mid's descriptor; its identity is its own one
        assert ctl.agents.get(grand).session.header.seed_length > 0
        expected = [
            f"{mid} [idle] parent={root.id} depth=1 — mid",
            f"{grand} [running] parent={mid} depth=2 — grand",
        ]
        result = await listed(ctl, root, scope="descendants")
        assert result.text == "\n".join(expected)
        gate.open()
        await ctl.settled(grand)
        await ctl.settled(mid, root)
        result = await listed(ctl, root, scope="descendants")
        assert result.text == "\n".join(
            [
                f"{mid} [ready] parent={root.id} depth=1 — mid",
                f"{grand} [ready] parent={mid} depth=2 — grand",
            ]
        )
    finally:
        await ctl.close()


async def test_a_restarted_host_lists_and_resumes_stored_children(tmp_path: Path) -> None:
    first = Ctl(tmp_path / "data")
    root = await first.root()
    root_id = root.id
    first.model.script("alpha", say("alpha done"))
    alpha = await first.start(root, "alpha")
    await first.settled(alpha, root)
    first.write_child("broken", root_id, CORRUPT)
    await first.close()
    # a torn last line never breaks listing; the index is only a cache
    with (tmp_path / "data" / f"{alpha}.jsonl").open("ab") as log:
        log.write(b'{"seq": 99, "body": {"kind": "mess')
    (tmp_path / "data" / ".index" / "identity.jsonl").unlink()

    second = Ctl(tmp_path / "data")
    try:
        root = await second.agents.resume(root_id, label="root")
        expected = f"{alpha} [ready] — alpha\nbroken [diagnostic: corrupt]"
        assert (await listed(second, root)).text == expected
        second.model.script("alpha", say("after restart"))
        sent = await second.call("send_message", {"subagent_id": alpha, "message": "go"}, root)
        assert sent.text == f"message queued as the next turn for subagent {alpha}"
        await second.settled(alpha, root)
        (request,) = second.model.requests_for("alpha")
        assert [m.content for m in request.messages] == ["work", "alpha done", "go"]
        assert (await listed(second, root)).text == expected
    finally:
        await second.close()
