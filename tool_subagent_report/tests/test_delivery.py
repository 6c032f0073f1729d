"""Delivery: the parent's message and its source, quiet vs next-step, FIFO, ordering with
settlement, nesting one edge up, and no implicit report of the final answer."""

from __future__ import annotations

from collections.abc import Callable

from host.agents import call, calls, say, tool_call
from tests.scenarios import background_tool, user_messages
from tests.subagents.report import (
    FINISHED,
    ReportEnv,
    accepted_text,
    echo,
    frame,
    source,
)
from tests.support import Gate, accepted, turn_count, user_texts

QUIET = {"plugins": {"subagent_report": {"delivery": "quiet"}}}


async def test_the_parent_gets_one_framed_user_message_with_the_report_source(
    env: ReportEnv,
) -> None:
    root = await env.root()
    output = "line one\n  line two with  spaces\n\n"  # delivered exactly, no trimming
    env.model.script("bg", call("report", output=output), say("closing words"))
    child = await env.start(root)
    await env.settled(child.id, root)
    (result,) = await env.stored_messages(child.id, "tool")
    message_id = result.structured["message_id"]
    assert result.content == accepted_text(message_id)
    reports = [m for m in user_messages(root) if m.source == source(child.id)]
    assert len(reports) == 1
    (report,) = reports
    assert report.content == f"Background subagent {child.id} reported:\n{output}"
    assert report.message_id == message_id  # the stable id the tool returned
    (accept,) = [a for a in accepted(root) if a.message_id == message_id]
    assert (accept.content, accept.source) == (report.content, source(child.id))
    # durable parent framing: the same message, id and source are in the parent's log
    root.session.commit(durable=True)
    durable = [m for m in await env.stored_messages(root.id, "user") if m.message_id == message_id]
    assert [(m.content, m.source) for m in durable] == [(report.content, source(child.id))]


async def test_next_step_delivery_wakes_an_idle_parent(env: ReportEnv) -> None:
    root = await env.root()
    child_gate = Gate()
    env.model.script("bg", call("report", output="wake up"), child_gate.reply(say("done")))
    env.model.script("root", say("noted"))
    child = await env.start(root)
    await child_gate.entered.wait()  # the report call has returned; the child is still busy
    await root.wait_idle()
    assert turn_count(root) == 1  # the report alone started a parent turn
    (request,) = env.model.requests_for("root")
    assert user_texts(request) == [frame(child.id, "wake up")]
    (accept,) = accepted(root)
    assert accept.delivery == "steer"
    child_gate.open()
    await env.settled(child.id, root)


async def test_next_step_delivery_joins_a_running_parent_at_its_next_step(
    env: ReportEnv,
) -> None:
    root = await env.root()
    root_gate = Gate()
    env.model.script("root", root_gate.reply(say("first thoughts")), say("with the report"))
    root.followup("work")
    await root_gate.entered.wait()
    child_gate = Gate()
    env.model.script("bg", call("report", output="news"), child_gate.reply(say("done")))
    child = await env.start(root)
    await child_gate.entered.wait()
    root_gate.open()
    await root.wait_idle()
    # one parent turn, extended by one step that claimed the report
    assert turn_count(root) == 1
    first, second = env.model.requests_for("root")
    assert user_texts(first) == ["work"]
    assert user_texts(second) == ["work", frame(child.id, "news")]
    child_gate.open()
    await env.settled(child.id, root)


async def test_quiet_delivery_does_not_wake_an_idle_parent_and_is_seen_next_step(
    make_env: Callable[..., ReportEnv],
) -> None:
    env = make_env(config=QUIET)
    root = await env.root()
    child_gate = Gate()
    env.model.script("bg", call("report", output="quiet news"), child_gate.reply(say("done")))
    child = await env.start(root)
    await child_gate.entered.wait()  # the report was accepted, the child is still resident
    assert root.status == "idle"
    assert turn_count(root) == 0
    (accept,) = accepted(root)
    assert (accept.delivery, accept.source) == ("inject", source(child.id))
    (result,) = [m for m in child.session.model_messages() if m.role == "tool"]
    assert result.content == accepted_text(accept.message_id)
    # the parent's next step (started by something else) sees it
    env.model.script("root", say("I see the news"))
    root.followup("anything new?")
    await root.wait_idle()
    (request,) = env.model.requests_for("root")
    assert frame(child.id, "quiet news") in user_texts(request)
    assert "anything new?" in user_texts(request)
    (seen,) = [m for m in user_messages(root) if m.source == source(child.id)]
    assert seen.message_id == accept.message_id
    child_gate.open()
    await env.settled(child.id, root)


async def test_quiet_delivery_to_a_running_parent_is_claimed_at_its_next_step(
    make_env: Callable[..., ReportEnv],
) -> None:
    env = make_env(config=QUIET)
    env.add_tool(echo)
    root = await env.root()
    root_gate = Gate()
    env.model.script("root", root_gate.reply(call("echo", text="x")), say("later"))
    root.followup("work")
    await root_gate.entered.wait()
    child_gate = Gate()
    env.model.script("bg", call("report", output="psst"), child_gate.reply(say("done")))
    child = await env.start(root)
    await child_gate.entered.wait()
    root_gate.open()
    await root.wait_idle()
    first, second = env.model.requests_for("root")
    assert frame(child.id, "psst") not in user_texts(first)
    assert frame(child.id, "psst") in user_texts(second)
    child_gate.open()
    await env.settled(child.id, root)


async def test_quiet_delivery_stays_pending_until_the_parent_is_woken(
    make_env: Callable[..., ReportEnv],
) -> None:
    env = make_env(config=QUIET)
    root = await env.root()
    env.model.script("bg", call("report", output="r1"), say("done"))
    child = await env.start(root)
    await env.settled(child.id, root)
    # the settlement notice woke the parent; its first step claimed the quiet report first
    (request,) = env.model.requests_for("root")
    texts = user_texts(request)
    assert texts[0] == frame(child.id, "r1")
    assert texts[1].startswith(f"Background subagent {child.id} {FINISHED}")


async def test_several_reports_in_one_turn_arrive_fifo(env: ReportEnv) -> None:
    root = await env.root()
    env.model.script(
        "bg",
        calls(tool_call("report", output="one"), tool_call("report", output="two")),
        call("report", output="three"),
        say("done"),
    )
    child = await env.start(root)
    await env.settled(child.id, root)
    results = await env.stored_messages(child.id, "tool")
    ids = [r.structured["message_id"] for r in results]
    assert len(set(ids)) == 3
    reports = [m for m in user_messages(root) if m.source == source(child.id)]
    assert [m.content for m in reports] == [frame(child.id, t) for t in ("one", "two", "three")]
    assert [m.message_id for m in reports] == ids
    assert [a.message_id for a in accepted(root)][:3] == ids
    # the settlement notice comes after all of them
    assert user_messages(root)[-1].content.startswith(f"Background subagent {child.id} {FINISHED}")


async def test_report_then_settlement_arrive_in_that_order_in_one_batch(env: ReportEnv) -> None:
    root = await env.root()
    root_gate = Gate()
    env.model.script("root", root_gate.reply(say("busy")), say("read both"))
    root.followup("work")
    await root_gate.entered.wait()
    env.model.script("bg", call("report", output="found"), say("closing words"))
    child = await env.start(root)
    await env.settled(child.id)  # settled while the parent is still in its first step
    pending = [a for a in accepted(root) if a.source and a.source["sender_session_id"] == child.id]
    assert [(a.delivery, a.source["kind"]) for a in pending if a.source] == [
        ("steer", "subagent-report"),
        ("steer", "subagent-settled"),
    ]
    root_gate.open()
    await root.wait_idle()
    first, second = env.model.requests_for("root")
    # one step claimed both, report first
    assert user_texts(second)[-2:] == [
        frame(child.id, "found"),
        f"Background subagent {child.id} {FINISHED}\n\nIts closing message:\nclosing words",
    ]
    assert len(user_texts(second)) == len(user_texts(first)) + 2
    # the report survived the child settling
    assert env.agents.get(child.id) is None
    assert user_messages(root)[1].content == frame(child.id, "found")


async def test_a_finished_child_that_never_reports_delivers_only_the_notice(
    env: ReportEnv,
) -> None:
    root = await env.root()
    env.model.script("bg", say("my final answer"))
    child = await env.start(root)
    await env.settled(child.id, root)
    (notice,) = user_messages(root)
    assert notice.source == {"kind": "subagent-settled", "sender_session_id": child.id}
    assert notice.content == (
        f"Background subagent {child.id} {FINISHED}\n\nIts closing message:\nmy final answer"
    )
    assert [(a.source or {}).get("kind") for a in accepted(root)] == ["subagent-settled"]
    assert not any("reported:" in m.content for m in user_messages(root))


async def test_nested_reports_go_exactly_one_edge_up(env: ReportEnv) -> None:
    env.add_tool(background_tool())
    root = await env.root()
    grand_gate = Gate()
    env.model.script("mid", call("background", text="grand"), say("mid waiting"))
    env.model.script("mid", call("report", output="derived update"), say("mid relayed"))
    env.model.script("grand", grand_gate.reply(call("report", output="deep finding")))
    env.model.script("grand", say("grand done"))
    mid = await env.start(root, label="mid", prompt="delegate")
    await grand_gate.entered.wait()
    await mid.wait_idle()
    mid_activation = env.activation(mid.id)
    assert mid_activation is not None and mid_activation.residency == "waiting"
    (grand_id,) = mid_activation.children
    grand = env.agents.get(grand_id)
    assert grand is not None and grand.tools.get("report") is not None
    grand_gate.open()
    await env.settled(grand_id)
    await env.settled(mid.id, root)
    # the grandchild's report reached the child (its direct parent) ...
    (grand_result,) = await env.stored_messages(grand_id, "tool")
    grand_message_id = grand_result.structured["message_id"]
    mid_users = await env.stored_messages(mid.id, "user")
    (deep,) = [m for m in mid_users if m.source == source(grand_id)]
    assert deep.content == frame(grand_id, "deep finding")
    assert deep.message_id == grand_message_id
    # ... which was woken by it in the same ChildActivation (it did not settle in between)
    mid_requests = env.model.requests_for("mid")
    assert any(frame(grand_id, "deep finding") in user_texts(r) for r in mid_requests)
    assert env.activation(mid.id) is None and mid_activation.residency == "settled"
    assert not mid_activation.resumed
    # the root received nothing from the grandchild, only the child's own report and notice
    root_users = user_messages(root)
    assert not any("deep finding" in m.content for m in root_users)
    assert all((m.source or {}).get("sender_session_id") == mid.id for m in root_users)
    assert all((a.source or {}).get("sender_session_id") == mid.id for a in accepted(root))
    assert [m.source for m in root_users] == [
        source(mid.id),
        {"kind": "subagent-settled", "sender_session_id": mid.id},
    ]
    assert root_users[0].content == frame(mid.id, "derived update")


async def test_a_report_accepted_before_the_child_is_released_is_not_retracted(
    env: ReportEnv,
) -> None:
    root = await env.root()
    root_gate = Gate()
    env.model.script("root", root_gate.reply(say("busy")), say("read it"))
    root.followup("work")
    await root_gate.entered.wait()
    child_gate = Gate()
    env.model.script("bg", call("report", output="keep me"), child_gate.reply(say("never")))
    child = await env.start(root)
    await child_gate.entered.wait()
    await env.subagents.drain_descendants(root)  # releases the child quietly, mid-turn
    assert env.activation(child.id) is None and env.agents.get(child.id) is None
    root_gate.open()
    await root.wait_idle()
    _, second = env.model.requests_for("root")
    assert user_texts(second)[-1] == frame(child.id, "keep me")
    assert [(a.source or {}).get("kind") for a in accepted(root)] == [None, "subagent-report"]
