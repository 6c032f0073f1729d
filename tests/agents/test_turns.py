"""Turns and steps: what the model receives, tool batches, limits and failures."""

from __future__ import annotations

import asyncio

import attrs

from host.agents import AgentRegistry, ScriptedModel, ToolSpec, call, calls, say, tool_call
from host.agents.prompt import PromptSection, register_section
from host.agents.registry import AgentSetup
from host.disposal import Disposer
from host.errors import HostError
from host.sessions.model import MessageEvent, ToolCall, TurnEnd
from host.tools import Tool, ToolExec, tool
from tests.agents.helpers import TextArgs, echo, kinds
from tests.support import bodies, stop_reasons


def tool_messages(agent: object) -> list[tuple[str, str, bool]]:
    return [
        (m.tool_call_id or "", m.content, m.is_error)
        for m in bodies(agent, MessageEvent)
        if m.role == "tool"
    ]


async def test_two_step_turn_sends_exactly_this_to_the_model(
    agents: AgentRegistry, model: ScriptedModel
) -> None:
    register_section(agents.sections, PromptSection("rules", "Be brief.", order=10), owner="test")
    register_section(agents.sections, PromptSection("intro", "You are a worker."), owner="test")

    def own_section(setup: AgentSetup) -> Disposer:
        return register_section(
            setup.sections, PromptSection("task", "Your label is w.", order=5), owner="setup"
        )

    model.script("w", call("echo", text="hi"), say("It said HI."))
    agent = await agents.create(label="w", setup=[own_section])
    asked = agent.followup("call echo")
    await agent.wait_idle()

    first, second = model.requests
    assert first.agent_id == agent.id and first.label == "w"
    assert first.system_prompt == "You are a worker.\n\nYour label is w.\n\nBe brief."
    assert first.tools == (ToolSpec("echo", echo.describe(), echo.parameters),)
    assert first.tools[0].parameters == {
        "type": "object",
        "properties": {"text": {"type": "string", "description": "what to echo"}},
        "required": ["text"],
        "additionalProperties": False,
    }
    assert [(m.role, m.content, m.message_id) for m in first.messages] == [
        ("user", "call echo", asked)
    ]
    assert second.system_prompt == first.system_prompt and second.tools == first.tools
    user, assistant, result = second.messages
    assert user == first.messages[0]
    assert (assistant.role, assistant.content) == ("assistant", "")
    assert assistant.tool_calls == (ToolCall("call_1", "echo", {"text": "hi"}),)
    assert (result.role, result.content, result.tool_call_id) == ("tool", "HI", "call_1")
    assert not result.is_error
    assert kinds(list(agent.session.events)) == [
        "inbox/accepted",
        "turn/start",
        "inbox/claimed",
        "message/user",
        "message/assistant",
        "message/tool",
        "message/assistant",
        "turn/end",
    ]
    assert agent.last_answer == "It said HI."
    model.assert_consumed()


def traced_tool(name: str, trace: list[str], *, concurrency_safe: bool) -> Tool:
    """A tool that logs its start and end around one scheduler yield."""

    @tool(name, f"The {name} tool.", TextArgs, concurrency_safe=concurrency_safe)
    async def run(args: TextArgs, exec: ToolExec) -> str:
        trace.append(f"start {args.text}")
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        trace.append(f"end {args.text}")
        return args.text

    return run


async def test_a_tool_described_by_a_function_is_described_afresh_at_every_step(
    agents: AgentRegistry, model: ScriptedModel
) -> None:
    steps: list[str] = []

    def description() -> str:
        return f"Count the steps ({len(steps)} so far)."

    @tool("count", description, TextArgs)
    async def count(args: TextArgs, exec: ToolExec) -> str:
        steps.append(args.text)
        return "counted"

    agents.tools.register("count", count, owner="t")
    model.script("w", call("count", text="a"), say("done"))
    agent = await agents.create(label="w")
    agent.followup("go")
    await agent.wait_idle()

    described = [
        spec.description for r in model.requests for spec in r.tools if spec.name == "count"
    ]
    assert described == [
        "Count the steps (0 so far).",
        "Count the steps (1 so far).",
    ]
    assert count.describe() == "Count the steps (1 so far)." and count.description is description


async def test_safe_batches_run_concurrently_and_others_in_order(
    agents: AgentRegistry, model: ScriptedModel
) -> None:
    trace: list[str] = []
    agents.tools.register("safe", traced_tool("safe", trace, concurrency_safe=True), owner="t")
    agents.tools.register("unsafe", traced_tool("unsafe", trace, concurrency_safe=False), owner="t")
    model.script(
        "w",
        calls(tool_call("safe", text="a"), tool_call("safe", text="b")),
        calls(tool_call("safe", text="c"), tool_call("unsafe", text="d")),
        say("done"),
    )
    agent = await agents.create(label="w")
    agent.followup("go")
    await agent.wait_idle()

    assert trace == ["start a", "start b", "end a", "end b", "start c", "end c", "start d", "end d"]
    assert [(cid, text) for cid, text, _ in tool_messages(agent)] == [
        ("call_1", "a"),
        ("call_2", "b"),
        ("call_3", "c"),
        ("call_4", "d"),
    ]


async def test_max_steps_ends_the_turn(agents: AgentRegistry, model: ScriptedModel) -> None:
    model.script("w", *[call("echo", text=str(n)) for n in range(3)])
    agent = await agents.create(label="w", max_steps=2)
    outcomes: list[str] = []
    agent.on_turn_end(lambda outcome: outcomes.append(outcome.stop_reason))
    agent.followup("loop")
    await agent.wait_idle()
    assert len(model.requests) == 2
    assert stop_reasons(agent) == ["max_steps"]
    assert outcomes == ["max_steps"]


async def test_model_error_ends_the_turn_and_the_agent_keeps_working(
    agents: AgentRegistry, model: ScriptedModel
) -> None:
    model.script("w", RuntimeError("provider down"), say("recovered"))
    agent = await agents.create(label="w")
    agent.followup("try")
    await agent.wait_idle()
    (end,) = bodies(agent, TurnEnd)
    assert end.stop_reason == "error"
    assert end.error == "model failed: RuntimeError: provider down"
    assert agent.status == "idle"

    agent.followup("again")
    await agent.wait_idle()
    assert stop_reasons(agent) == ["error", "completed"]
    assert agent.last_answer == "recovered"


@tool("explode", "Always fails.", TextArgs)
async def explode(args: TextArgs, exec: ToolExec) -> str:
    raise RuntimeError("kaput")


@tool("refuse", "Fails with a service error.", TextArgs)
async def refuse(args: TextArgs, exec: ToolExec) -> str:
    raise HostError("NOPE", "not today")


async def test_tool_failures_become_error_results_and_the_turn_continues(
    agents: AgentRegistry, model: ScriptedModel
) -> None:
    agents.tools.register("explode", explode, owner="t")
    agents.tools.register("refuse", refuse, owner="t")
    model.script(
        "w",
        calls(
            tool_call("nope", text="x"),
            tool_call("echo", text=3),
            tool_call("echo", txt="x"),
            tool_call("explode", text="x"),
            tool_call("refuse", text="x"),
        ),
        say("handled"),
    )
    agent = await agents.create(label="w")
    agent.followup("go")
    await agent.wait_idle()
    results = tool_messages(agent)
    assert [(cid, is_error) for cid, _, is_error in results] == [
        (f"call_{n}", True) for n in range(1, 6)
    ]
    texts = [text for _, text, _ in results]
    assert texts[0] == 'unknown tool "nope"'
    assert texts[1].startswith("invalid arguments for echo: text:")
    assert texts[2].startswith("invalid arguments for echo: text: required")
    assert texts[3:] == ["explode failed: RuntimeError: kaput", "refuse failed: not today"]
    assert stop_reasons(agent) == ["completed"]
    assert agent.last_answer == "handled"


@attrs.frozen
class Seen:
    agent_id: str
    ctx: object
    call_id: str


async def test_tools_receive_the_agent_ctx_and_call_id(
    agents: AgentRegistry, model: ScriptedModel
) -> None:
    seen: list[Seen] = []

    @tool("who", "Who calls?", TextArgs)
    async def who(args: TextArgs, exec: ToolExec) -> str:
        seen.append(Seen(exec.agent.id, exec.ctx, exec.tool_call_id))
        return "ok"

    agents.tools.register("who", who, owner="t")
    model.script("w", call("who", text="x"), say("done"))
    agent = await agents.create(label="w")
    agent.followup("go")
    await agent.wait_idle()
    assert seen == [Seen(agent.id, {"name": "ctx"}, "call_1")]


async def test_each_calls_tool_is_looked_up_once(
    agents: AgentRegistry, model: ScriptedModel
) -> None:
    trace: list[str] = []

    def offered(header: object) -> bool:  # asked each time the tool is described or found
        trace.append("offered")
        return True

    @tool("look", "Look.", TextArgs, concurrency_safe=True, offered_to=offered)
    async def look(args: TextArgs, exec: ToolExec) -> str:
        trace.append(f"ran {args.text}")
        return "seen"

    agents.tools.register("look", look, owner="t")
    model.script("w", calls(tool_call("look", text="a"), tool_call("look", text="b")), say("ok"))
    agent = await agents.create(label="w")
    agent.followup("go")
    await agent.wait_idle()
    # described to the model, each call's tool found once, both run, described again
    assert trace == ["offered", "offered", "offered", "ran a", "ran b", "offered"]
