"""Resuming an agent whose log ends in tool calls without results (docs/approvals.md, "After
a restart").

A host that dies while a turn runs leaves that turn open — the store closes it with
``TurnEnd(interrupted)`` when it loads the log — and the calls of its last assistant message
without results. The model must not be called again before each of those calls has its tool
message (an OpenAI-compatible server refuses an assistant message with ``tool_calls`` that is
not followed by one tool message per call id), so ``resume_unfinished`` gives each its result
when the agent is resumed (a root's resume or a child's cold resume), in call order:

* its own approval request still **without a decision** in its log → asked again: the same
  request id and origin, routed to the current root (mirrored there if the root's log lacks
  it), recorded as usual; approved → the tool runs once and its result is the call's; denied →
  the denial; an ``ask_user`` question → the answer;
* a request **decided** before the crash is never asked again: denied → the denial; answered
  → the answer; approved → ``tool call was interrupted before it finished``, because the host
  cannot know whether the tool had run, and one recorded approval runs a tool at most once
  (the model may call it again, which asks again); cancelled (an interrupt, a settlement) →
  interrupted;
* any other call (no request: it was running, or never started) → interrupted.

When something is asked again, the results are given by a turn that runs before any queued
message and then goes on like any turn (the model sees the results and continues). Otherwise
they are appended at once, with no turn and no model call, as a live interrupt leaves them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from host.agents.driver import Finisher
from host.agents.tool_results import INTERRUPTED_TOOL_TEXT, tool_message
from host.approvals.requests import Answer, denied_text, question_result
from host.approvals.service import ApprovalService
from host.sessions.model import (
    ApprovalDecided,
    ApprovalRequested,
    Compaction,
    Event,
    MessageEvent,
    ToolCall,
)
from host.tools.execute import run_tool
from host.tools.tool import ToolExec, ToolResult

if TYPE_CHECKING:
    from host.agents.agent import Agent


@attrs.frozen
class _Request:
    requested: ApprovalRequested
    decided: ApprovalDecided | None


def unfinished(
    events: Sequence[Event], session_id: str
) -> tuple[list[ToolCall], dict[str, _Request]]:
    """The calls of the log's last assistant message still without a result (none unless
    only tool results and model-hidden events follow it), and this session's own requests
    made after it (with their decisions), by tool call id."""
    answered: set[str] = set()
    decisions: dict[str, ApprovalDecided] = {}
    requests: dict[str, _Request] = {}
    for event in reversed(events):
        body = event.body
        if isinstance(body, ApprovalDecided):
            decisions[body.request_id] = body
        elif isinstance(body, ApprovalRequested) and body.origin.session_id == session_id:
            decided = decisions.get(body.request_id)
            requests.setdefault(body.tool_call_id, _Request(body, decided))
        elif isinstance(body, Compaction):  # what it summarized cannot be answered
            break
        elif isinstance(body, MessageEvent):
            if body.role == "tool":
                answered.add(body.tool_call_id or "")
                continue
            if body.role != "assistant" or not body.tool_calls:
                break
            return [call for call in body.tool_calls if call.id not in answered], requests
    return [], {}


def resume_unfinished(agent: Agent) -> None:
    """Give the calls the log left without results theirs (module docstring)."""
    calls, requests = unfinished(agent.session.events, agent.id)
    if not calls:
        return
    ctx = agent.ctx
    approvals: ApprovalService | None = ctx.find("approvals") if ctx is not None else None
    if approvals is not None:
        decided = [r.decided for r in requests.values() if r.decided is not None]
        if decided:
            approvals.mirror_decisions(agent, decided)
    plan: list[tuple[ToolCall, Finisher | ToolResult]] = []
    for call in calls:
        request = requests.get(call.id)
        if request is None:
            plan.append((call, _INTERRUPTED))
        elif request.decided is None and approvals is not None:
            plan.append((call, _ask_again(approvals, agent, call, request.requested)))
        else:
            plan.append((call, settled_result(request.requested, request.decided)))
    results = [(call, item) for call, item in plan if isinstance(item, ToolResult)]
    if len(results) == len(plan):
        agent.session.append_all([tool_message(call, result) for call, result in results])
        agent.session.commit(durable=True)
        return
    agent.resume_calls([(call, _finisher(item)) for call, item in plan])


_INTERRUPTED = ToolResult.error(INTERRUPTED_TOOL_TEXT)


def settled_result(requested: ApprovalRequested, decided: ApprovalDecided | None) -> ToolResult:
    """The result of a call whose request was decided before a crash left it without one."""
    if decided is None:
        return _INTERRUPTED
    if decided.decision == "denied":
        return ToolResult.error(denied_text(requested.tool, decided.reason or "no reason given"))
    if decided.decision == "answered" and requested.question is not None:
        return question_result_of(decided)
    return _INTERRUPTED


def question_result_of(decided: ApprovalDecided) -> ToolResult:
    """An ``ask_user`` call's result from its recorded decision."""
    return question_result(Answer(decided.decision, decided.reason, decided.answer))


def _finisher(item: Finisher | ToolResult) -> Finisher:
    if not isinstance(item, ToolResult):
        return item

    async def given(exec: ToolExec) -> ToolResult:
        return item

    return given


def _ask_again(
    approvals: ApprovalService, agent: Agent, call: ToolCall, requested: ApprovalRequested
) -> Finisher:
    """Ask ``requested`` again; approved → run the call once (its approval is recorded)."""

    async def finish(exec: ToolExec) -> ToolResult:
        answer = await approvals.ask_again(agent, requested)
        if requested.question is not None:
            return question_result(answer)
        if answer.decision not in ("approved", "approved_for_session"):
            return ToolResult.error(denied_text(requested.tool, answer.reason or "no reason given"))
        tool = agent.tools.get(call.name)
        return await run_tool(tool, call.name, call.arguments, exec, approved=True)

    return finish
