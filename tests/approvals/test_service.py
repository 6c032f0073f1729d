"""The approvals service: routing to the root, origin, decisions, durability order, queueing."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from host.agents import call, say
from host.approvals.requests import Answer, ApprovalError, ApprovalRequest
from host.approvals.service import ApprovalService
from host.sessions.model import (
    ApprovalDecided,
    ApprovalOrigin,
    ApprovalRequested,
    MessageEvent,
    SessionHeader,
)
from host.testing import HostHarness, MakeHarness
from host.tools import ToolExec, tool
from tests.support import bodies

RAN: list[str] = []


@tool(needs_approval=True)
async def shell(cmd: str) -> str:
    """Run a shell command."""
    RAN.append(cmd)
    return f"ran {cmd}"


@tool(needs_approval=lambda args: args["path"].startswith("/"))
async def write(path: str) -> str:
    """Write a file."""
    RAN.append(path)
    return f"wrote {path}"


@tool(needs_approval=lambda args: args["nope"])
async def fragile(x: int) -> str:
    """A tool whose approval rule raises."""
    RAN.append(str(x))
    return "ok"


@tool
async def harmless(x: int) -> str:
    """Needs nobody's consent."""
    RAN.append(f"harmless {x}")
    return "fine"


class Asker:
    """A front end that records each request and answers from a list (or waits)."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.asked: list[ApprovalRequest] = []
        self.release = asyncio.Event()
        self.hold = False

    async def __call__(self, request: ApprovalRequest) -> Answer:
        self.asked.append(request)
        if self.hold:
            await self.release.wait()
        return self.answers.pop(0)


def service(h: HostHarness) -> ApprovalService:
    found = h.services.get("approvals")
    assert isinstance(found, ApprovalService)
    return found


@pytest.fixture
def h(make_harness: MakeHarness) -> HostHarness:
    RAN.clear()
    harness = make_harness()
    for made in (shell, write, fragile, harmless):
        harness.add_tool(made)
    return harness


async def tree(h: HostHarness, depth: int) -> list[Any]:
    """A root and a chain of descendants down to ``depth`` (each a live agent)."""
    agents = [await h.root("root")]
    for level in range(1, depth + 1):
        parent = agents[-1]
        header = SessionHeader(
            id=f"sub_level{level}", parent_session=parent.id, delegation_depth=level
        )
        agents.append(await h.agents.create(header, label=f"level {level}"))
    return agents


async def child(h: HostHarness, parent: Any, label: str) -> Any:
    """A live child of ``parent`` at depth 1 labelled ``label`` (session ``sub_<label>``)."""
    header = SessionHeader(id=f"sub_{label}", parent_session=parent.id, delegation_depth=1)
    return await h.agents.create(header, label=label)


async def test_a_depth_three_request_reaches_the_root_with_its_exact_origin(h: HostHarness) -> None:
    root, _, _, deepest = await tree(h, 3)
    deepest.inbox.accept("followup", "go", {"kind": "test", "tool_call_id": "call_in_parent"})
    asker = Asker(Answer.approve())
    service(h).on_request(asker)
    h.model.script("level 3", call("shell", cmd="rm -rf build"), say("done"))
    await deepest.wait_idle()
    (request,) = asker.asked
    assert request.root_id == root.id
    assert request.origin == ApprovalOrigin(
        deepest.id, deepest.id, 3, "level 3", parent_tool_call_id="call_in_parent"
    )
    assert (request.tool, request.arguments) == ("shell", {"cmd": "rm -rf build"})
    assert request.line() == (
        f'{deepest.id} (level 3, depth 3) wants to run shell {{"cmd": "rm -rf build"}}'
    )
    assert RAN == ["rm -rf build"]
    mirrored = bodies(root, ApprovalRequested)
    assert mirrored == bodies(deepest, ApprovalRequested)
    assert mirrored[0].origin == request.origin
    assert bodies(root, ApprovalDecided) == [ApprovalDecided(request.request_id, "approved")]


async def test_the_decision_is_recorded_before_the_tool_result(h: HostHarness) -> None:
    root = await h.root()
    service(h).on_request(Asker(Answer.approve()))
    h.model.script("root", call("shell", cmd="ls"), say("listed"))
    root.followup("list")
    await root.wait_idle()
    kinds = [e.kind for e in root.session.events]
    requested, decided = kinds.index("approval/requested"), kinds.index("approval/decided")
    result = next(
        i
        for i, e in enumerate(root.session.events)
        if isinstance(e.body, MessageEvent) and e.body.role == "tool"
    )
    assert requested < decided < result
    stored = [e.kind for e in await h.stored_events(root.id)]
    assert stored.count("approval/requested") == stored.count("approval/decided") == 1


async def test_approve_once_asks_again_and_approve_for_session_does_not(h: HostHarness) -> None:
    root = await h.root()
    asker = Asker(Answer.approve(), Answer.approve_for_session())
    service(h).on_request(asker)
    h.model.script(
        "root",
        call("shell", cmd="a"),
        call("shell", cmd="b"),
        call("shell", cmd="c"),
        call("shell", cmd="d"),
        say("done"),
    )
    root.followup("go")
    await root.wait_idle()
    assert [r.arguments["cmd"] for r in asker.asked] == ["a", "b"]
    assert RAN == ["a", "b", "c", "d"]


async def test_a_denial_is_what_the_model_sees_and_nothing_runs(h: HostHarness) -> None:
    root = await h.root()
    service(h).on_request(Asker(Answer.deny("not on my machine")))
    h.model.script("root", call("shell", cmd="rm -rf /"), say("ok"))
    root.followup("go")
    await root.wait_idle()
    assert RAN == []
    (result,) = [m for m in bodies(root, MessageEvent) if m.role == "tool"]
    assert (result.content, result.is_error) == (
        "the user denied shell: not on my machine",
        True,
    )
    decided = bodies(root, ApprovalDecided)
    assert [(d.decision, d.reason) for d in decided] == [("denied", "not on my machine")]


async def test_needs_approval_may_depend_on_the_arguments(h: HostHarness) -> None:
    root = await h.root()
    asker = Asker(Answer.approve())
    service(h).on_request(asker)
    h.model.script("root", call("write", path="notes.txt"), call("write", path="/etc/x"), say("ok"))
    root.followup("go")
    await root.wait_idle()
    assert [r.arguments for r in asker.asked] == [{"path": "/etc/x"}]
    assert RAN == ["notes.txt", "/etc/x"]


async def test_a_raising_needs_approval_is_asked(
    h: HostHarness, caplog: pytest.LogCaptureFixture
) -> None:
    root = await h.root()
    asker = Asker(Answer.deny("no"), Answer.deny("no"))
    service(h).on_request(asker)
    h.model.script("root", call("fragile", x=1), call("fragile", x=2), say("ok"))
    root.followup("go")
    await root.wait_idle()
    assert len(asker.asked) == 2 and RAN == []
    logged = [r for r in caplog.records if "needs_approval of fragile raised" in r.getMessage()]
    assert len(logged) == 1


async def test_a_tool_without_needs_approval_never_asks(h: HostHarness) -> None:
    root = await h.root()
    asker = Asker()
    service(h).on_request(asker)
    h.model.script("root", call("harmless", x=1), say("ok"))
    root.followup("go")
    await root.wait_idle()
    assert asker.asked == [] and RAN == ["harmless 1"]
    assert bodies(root, ApprovalRequested) == []


async def test_siblings_are_asked_one_at_a_time_in_arrival_order(h: HostHarness) -> None:
    root = await h.root()
    first, second = await child(h, root, "first"), await child(h, root, "second")
    asker = Asker(Answer.approve(), Answer.approve())
    asker.hold = True
    service(h).on_request(asker)
    h.model.script("first", call("shell", cmd="one"), say("ok"))
    h.model.script("second", call("shell", cmd="two"), say("ok"))
    first.followup("go")
    await asyncio.sleep(0.05)
    second.followup("go")
    await asyncio.sleep(0.05)
    assert [r.arguments["cmd"] for r in asker.asked] == ["one"]  # the second waits its turn
    assert [r.arguments["cmd"] for r in service(h).pending()] == ["one", "two"]
    asker.release.set()
    await first.wait_idle()
    await second.wait_idle()
    assert [r.arguments["cmd"] for r in asker.asked] == ["one", "two"]
    assert RAN == ["one", "two"]


async def test_without_a_front_end_requests_wait_for_decide(h: HostHarness) -> None:
    root = await h.root()
    h.model.script("root", call("shell", cmd="ls"), say("ok"))
    root.followup("go")
    while not service(h).pending():
        await asyncio.sleep(0.01)
    (request,) = service(h).pending()
    service(h).decide(request.request_id, Answer.approve())
    await root.wait_idle()
    assert RAN == ["ls"]
    with pytest.raises(ApprovalError) as closed:
        service(h).decide(request.request_id, Answer.approve())
    assert closed.value.message == f'approval request "{request.request_id}" is already approved'
    with pytest.raises(ApprovalError) as unknown:
        service(h).decide("apr_nope", Answer.approve())
    assert (unknown.value.code, unknown.value.message) == (
        "UNKNOWN_REQUEST",
        'no pending approval request "apr_nope"',
    )


async def test_an_interrupt_cancels_the_pending_request_in_both_logs(h: HostHarness) -> None:
    root, child = await tree(h, 1)
    h.model.script("level 1", call("shell", cmd="sleep"), say("never"))
    child.followup("go")
    while not service(h).pending():
        await asyncio.sleep(0.01)
    (request,) = service(h).pending()
    child.interrupt()
    await child.wait_idle()
    assert RAN == [] and service(h).pending() == []
    for agent in (child, root):
        assert [(d.request_id, d.decision) for d in bodies(agent, ApprovalDecided)] == [
            (request.request_id, "cancelled")
        ]
    with pytest.raises(ApprovalError, match="is already cancelled"):
        service(h).decide(request.request_id, Answer.approve())


async def test_a_timeout_denies(make_harness: MakeHarness) -> None:
    RAN.clear()
    h = make_harness(config={"plugins": {"approvals": {"timeout": 0.05}}})
    h.add_tool(shell)
    root = await h.root()
    h.model.script("root", call("shell", cmd="ls"), say("ok"))
    root.followup("go")
    await root.wait_idle()
    (result,) = [m for m in bodies(root, MessageEvent) if m.role == "tool"]
    assert result.content == "the user denied shell: no answer within 0.05 seconds"
    assert RAN == []


async def test_the_policy_decides_before_anyone_is_asked(make_harness: MakeHarness) -> None:
    RAN.clear()
    config = {"plugins": {"approvals": {"mode": "deny", "allow": ["wri*"], "ask": ["harm*"]}}}
    h = make_harness(config=config)
    for made in (shell, write, harmless):
        h.add_tool(made)
    asker = Asker(Answer.deny("asked"))
    service(h).on_request(asker)
    root = await h.root()
    h.model.script(
        "root",
        call("shell", cmd="x"),
        call("write", path="/etc/x"),
        call("harmless", x=1),
        say("ok"),
    )
    root.followup("go")
    await root.wait_idle()
    results = [m.content for m in bodies(root, MessageEvent) if m.role == "tool"]
    assert results == [
        "the user denied shell: the approval policy does not allow it",
        "wrote /etc/x",
        "the user denied harmless: asked",
    ]
    assert [r.tool for r in asker.asked] == ["harmless"]
    assert RAN == ["/etc/x"]


async def test_ask_user_returns_the_answer(h: HostHarness) -> None:
    _, child = await tree(h, 1)
    asker = Asker(Answer.reply("blue"))
    service(h).on_request(asker)
    h.model.script(
        "level 1", call("ask_user", question="Which colour?", choices=["red", "blue"]), say("ok")
    )
    child.followup("go")
    await child.wait_idle()
    (request,) = asker.asked
    assert request.line() == f"{child.id} (level 1, depth 1) asks: Which colour? [1 red / 2 blue]"
    (result,) = [m for m in bodies(child, MessageEvent) if m.role == "tool"]
    assert (result.content, result.structured) == ("blue", {"answer": "blue"})
    decided = bodies(child, ApprovalDecided)
    assert [(d.decision, d.answer) for d in decided] == [("answered", "blue")]


async def test_a_blank_question_asks_nobody_and_blank_choices_are_dropped(
    h: HostHarness,
) -> None:
    _, child = await tree(h, 1)
    asker = Asker(Answer.reply("the sea"))
    service(h).on_request(asker)
    h.model.script(
        "level 1",
        call("ask_user", question="  "),  # as a small model really sent it
        call("ask_user", question="Which poem?", choices=["", "the sea", " "]),
        say("ok"),
    )
    child.followup("go")
    await child.wait_idle()
    (request,) = asker.asked
    assert request.line() == f"{child.id} (level 1, depth 1) asks: Which poem? [1 the sea]"
    results = [m for m in bodies(child, MessageEvent) if m.role == "tool"]
    assert [(r.content, r.is_error) for r in results] == [
        ("the question is empty: nobody was asked; write the whole question", True),
        ("the sea", False),
    ]


async def test_an_agentless_call_cannot_ask(h: HostHarness) -> None:
    result = await h.call("shell", {"cmd": "ls"})
    assert result.text == "the user denied shell: a call without an agent cannot ask"
    assert RAN == []


def test_the_exec_parameter_of_ask_user_is_not_in_its_schema() -> None:
    from host.builtins.approvals import ask_user

    assert list(ask_user.parameters["properties"]) == ["question", "choices"]
    assert isinstance(ToolExec, type)


async def test_a_delegated_child_names_the_parent_call_that_started_it(
    make_harness: MakeHarness,
) -> None:
    import agent_host_subagent

    RAN.clear()
    h = make_harness(("subagent", agent_host_subagent))
    h.add_tool(shell)
    asker = Asker(Answer.approve())
    service(h).on_request(asker)
    root = await h.root("root")
    h.model.script(
        "root",
        call("subagent", description="clean up", prompt="Clean.", run_in_background=False),
        say("done"),
    )
    h.model.script("clean up", call("shell", cmd="make clean"), say("cleaned"))
    root.followup("go")
    await root.wait_idle()
    (started,) = [m for m in bodies(root, MessageEvent) if m.role == "assistant" and m.tool_calls]
    (request,) = asker.asked
    assert request.origin.parent_tool_call_id == started.tool_calls[0].id
    assert (request.origin.depth, request.origin.label, request.root_id) == (1, "clean up", root.id)
    assert RAN == ["make clean"]


async def test_a_request_that_cannot_be_recorded_runs_nothing(
    h: HostHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from host.errors import HostError

    root = await h.root()
    service(h).on_request(Asker(Answer.approve()))

    def refuse(durable: bool = False) -> None:
        raise HostError("SESSION_WRITE_FAILED", "disk full")

    h.model.script("root", call("shell", cmd="ls"), say("ok"))
    monkeypatch.setattr(root.session, "commit", refuse)
    root.followup("go")
    await root.wait_idle()
    monkeypatch.undo()
    assert RAN == []
    (result,) = [m for m in bodies(root, MessageEvent) if m.role == "tool"]
    assert (result.content, result.is_error) == ("shell was not run: disk full", True)


async def test_a_decision_a_log_refuses_does_not_stall_the_requests_behind_it(
    h: HostHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from host.errors import HostError

    root = await h.root()
    first, second = await child(h, root, "one"), await child(h, root, "two")
    asker = Asker(Answer.approve(), Answer.approve())
    asker.hold = True
    service(h).on_request(asker)
    h.model.script("one", call("shell", cmd="one"), say("ok"))
    h.model.script("two", call("shell", cmd="two"), say("ok"))
    first.followup("go")
    await asyncio.sleep(0.05)
    second.followup("go")
    await asyncio.sleep(0.05)

    def refuse(durable: bool = False) -> None:  # the first request's decision cannot be kept
        raise HostError("SESSION_WRITE_FAILED", "disk full")

    monkeypatch.setattr(first.session, "commit", refuse)
    asker.release.set()
    await asyncio.wait_for(second.wait_idle(), 5)
    monkeypatch.undo()
    await first.wait_idle()
    assert [r.arguments["cmd"] for r in asker.asked] == ["one", "two"]
    assert "two" in RAN and "one" not in RAN


async def test_an_interrupt_wins_over_a_cancellation_that_cannot_be_recorded(
    h: HostHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from host.errors import HostError

    root = await h.root()
    ended: list[str] = []
    root.on_turn_end(lambda outcome: ended.append(outcome.stop_reason))
    h.model.script("root", call("shell", cmd="ls"), say("never"))
    root.followup("go")
    while not service(h).pending():
        await asyncio.sleep(0.01)

    def refuse(durable: bool = False) -> None:
        raise HostError("SESSION_WRITE_FAILED", "disk full")

    monkeypatch.setattr(root.session, "commit", refuse)
    root.interrupt()
    await root.wait_idle()
    monkeypatch.undo()
    assert ended == ["interrupted"] and RAN == []


async def siblings_asking(h: HostHarness, asker: Any) -> tuple[Any, Any, Any]:
    """A root and two children, each calling ``shell`` (``a`` first): both requests queued,
    ``asker`` the front end."""
    root = await h.root("root")
    first, second = await child(h, root, "a"), await child(h, root, "b")
    service(h).on_request(asker)
    h.model.script("a", call("shell", cmd="one"), say("a done"))
    h.model.script("b", call("shell", cmd="two"), say("b done"))
    first.followup("go")
    while not asker.asked:
        await asyncio.sleep(0.01)
    second.followup("go")
    while len(service(h).pending()) < 2:
        await asyncio.sleep(0.01)
    return root, first, second


async def test_always_decides_the_queued_requests_for_the_same_tool(h: HostHarness) -> None:
    asker = Asker(Answer.approve_for_session())
    asker.hold = True
    root, first, second = await siblings_asking(h, asker)
    asker.release.set()
    await first.wait_idle()
    await second.wait_idle()
    assert [r.arguments["cmd"] for r in asker.asked] == ["one"]  # "two" was never asked
    assert sorted(RAN) == ["one", "two"]
    for agent in (first, second):
        assert [d.decision for d in bodies(agent, ApprovalDecided)] == ["approved_for_session"]
    assert [d.decision for d in bodies(root, ApprovalDecided)] == ["approved_for_session"] * 2


class SlowAsker(Asker):
    """Answers each request ``delay`` seconds after it is shown."""

    def __init__(self, delay: float, *answers: Answer) -> None:
        super().__init__(*answers)
        self.delay = delay

    async def __call__(self, request: ApprovalRequest) -> Answer:
        self.asked.append(request)
        await asyncio.sleep(self.delay)
        return self.answers.pop(0)


async def test_a_timeout_counts_from_when_the_request_is_shown(make_harness: MakeHarness) -> None:
    RAN.clear()
    h = make_harness(config={"plugins": {"approvals": {"timeout": 1.0}}})
    h.add_tool(shell)
    # each answered 0.6 s after it is shown: "two" waits 1.2 s from its queueing
    asker = SlowAsker(0.6, Answer.approve(), Answer.approve())
    _, first, second = await siblings_asking(h, asker)
    await first.wait_idle()
    await second.wait_idle()
    assert [r.arguments["cmd"] for r in asker.asked] == ["one", "two"]
    assert sorted(RAN) == ["one", "two"]
