"""``agent-host mcp serve`` over stdio, driven by the SDK's own client: background subagents
read through ``read_agent_messages``, a root resumed by the next server process, progress of
a foreground call, and every request to the user put to the client by elicitation."""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp_types as types
from agent_host_mcp.serving.mailbox import DESCRIPTION

REPORTING = {
    "research": [
        {"tool_calls": [{"name": "report", "arguments": {"output": "Found it."}}]},
        "Research done.",
    ]
}
"""A background child that reports, then settles with a closing message."""


def settled_text(child_id: str, closing: str) -> str:
    return (
        f"Background subagent {child_id} finished and will do no further work unless you "
        f"send it more.\n\nIts closing message:\n{closing}"
    )


async def start(session: Any, description: str = "research", **more: Any) -> str:
    arguments = {"description": description, "prompt": "Look.", **more}
    result = await session.call_tool("subagent", arguments)
    assert not result.is_error, result.content
    child_id: str = result.structured_content["subagent_id"]
    assert result.content[0].text == f"started subagent {child_id}"
    return child_id


async def test_the_tools_are_the_five_with_honest_hints(serve) -> None:
    async with serve.project(REPORTING).stdio() as session:
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert list(listed) == [
        "subagent", "send_message", "interrupt_agent", "list_agents", "read_agent_messages"
    ]
    hints = {name: tool.annotations.read_only_hint for name, tool in listed.items()}
    assert hints == {
        "subagent": False, "send_message": False, "interrupt_agent": False,
        "list_agents": True, "read_agent_messages": True,
    }
    reading = listed["read_agent_messages"]
    assert reading.description == DESCRIPTION
    assert reading.description.startswith(
        "Read the reports and settlement notices your background subagents sent you, oldest "
        "first: those after the cursor `after`"
    )
    assert reading.input_schema["properties"]["wait_seconds"]["maximum"] == 60


async def test_a_background_report_and_its_settlement_are_read_once_each(serve, settle) -> None:
    async with serve.project(REPORTING).stdio() as session:
        child_id = await start(session)
        messages, after = await settle(session)
        again = await session.call_tool("read_agent_messages", {"after": after})
    assert [(m["subagent_id"], m["kind"], m["text"]) for m in messages] == [
        (child_id, "report", f"Background subagent {child_id} reported:\nFound it."),
        (child_id, "settled", settled_text(child_id, "Research done.")),
    ]
    assert messages[0]["seq"] < messages[1]["seq"] <= int(after)
    assert again.structured_content == {"messages": [], "next": after}
    assert again.content[0].text == f"no new messages\n\n(next cursor: {after})"
    [root_log] = (serve.path / "data").glob("mcp-*.jsonl")
    assert '"kind":"turn/start"' not in root_log.read_text()  # no model answers the client's root


async def test_the_cursor_of_a_fresh_roots_read_is_accepted_and_misses_nothing(
    serve, settle
) -> None:
    async with serve.project(REPORTING).stdio() as session:
        first = await session.call_tool("read_agent_messages", {})
        cursor = first.structured_content["next"]
        second = await session.call_tool("read_agent_messages", {"after": cursor})
        child_id = await start(session)
        messages, _after = await settle(session, second.structured_content["next"])
    assert first.structured_content == {"messages": [], "next": cursor}
    assert not second.is_error, second.content
    assert second.structured_content == {"messages": [], "next": cursor}
    assert [(m["subagent_id"], m["kind"]) for m in messages] == [
        (child_id, "report"), (child_id, "settled")
    ]


async def test_a_long_poll_wakes_when_a_report_arrives(serve, settle) -> None:
    script = {
        "research": [
            "Waiting for more.",
            {"tool_calls": [{"name": "report", "arguments": {"output": "Late news."}}]},
            "Done now.",
        ]
    }
    async with serve.project(script).stdio() as session:
        child_id = await start(session)
        _settled, after = await settle(session)
        polled: list[Any] = []

        async def poll() -> None:
            arguments = {"after": after, "wait_seconds": serve.WAIT}
            polled.append(await session.call_tool("read_agent_messages", arguments))

        async with anyio.create_task_group() as group:
            group.start_soon(poll)
            await anyio.sleep(0.5)  # the poll is waiting (nothing new yet)
            assert not polled
            sent = await session.call_tool(
                "send_message", {"subagent_id": child_id, "message": "More, please."}
            )
    assert sent.content[0].text == f"message queued as the next turn for subagent {child_id}"
    [first, *_] = polled[0].structured_content["messages"]
    assert (first["kind"], first["text"]) == (
        "report", f"Background subagent {child_id} reported:\nLate news."
    )


async def test_a_settled_child_resumes_cold_in_the_next_server_process(serve, settle) -> None:
    serve.project({"research": ["First answer."]})
    async with serve.stdio() as session:
        child_id = await start(session)
        _messages, after = await settle(session)
    serve.project({"research": ["Second answer, with my history."]})  # read per process
    async with serve.stdio() as session:  # the next process: the same root, resumed
        listed = await session.call_tool("list_agents", {})
        sent = await session.call_tool(
            "send_message", {"subagent_id": child_id, "message": "Go on."}
        )
        messages, _after = await settle(session, after)
        transcript = await session.read_resource(f"agent://{child_id}/transcript")
    assert listed.content[0].text == f"{child_id} [ready] — research"
    assert listed.structured_content == {
        "agents": [{"kind": "child", "id": child_id, "label": "research", "status": "ready"}]
    }
    assert sent.structured_content["message_id"]
    assert [m["text"] for m in messages] == [
        settled_text(child_id, "Second answer, with my history.")
    ]
    items = json.loads(transcript.contents[0].text)["items"]
    texts = [item.get("text") for item in items if item["type"] in ("userMessage", "agentMessage")]
    assert texts == ["Look.", "First answer.", "Go on.", "Second answer, with my history."]


async def test_a_foreground_child_streams_progress_and_returns_its_answer(serve) -> None:
    script = {
        "research": [
            {"text": "Looking around.", "tool_calls": [{"name": "list_agents", "arguments": {}}]},
            "The answer is 42.",
        ]
    }
    progress: list[str | None] = []

    async def heard(value: float, total: float | None, message: str | None) -> None:
        progress.append(message)

    async with serve.project(script).stdio() as session:
        arguments = {"description": "research", "prompt": "Look.", "run_in_background": False}
        result = await session.call_tool("subagent", arguments, progress_callback=heard)
    assert result.content[0].text == "The answer is 42."
    assert result.structured_content["stop_reason"] == "completed"
    said = "".join(m for m in progress if m and m != "calling list_agents")
    assert "calling list_agents" in progress
    assert said == "Looking around.The answer is 42."


ASKING = {
    "research": [
        {
            "tool_calls": [
                {"name": "subagent", "arguments": {"description": "deep", "prompt": "Dig."}}
            ]
        },
        "Research waits for deep.",
        "Research done.",
    ],
    "deep": [{"tool_calls": [{"name": "list_agents", "arguments": {}}]}, "Dug."],
}
"""A background child starts a background grandchild (depth 2) whose ``list_agents`` call
the policy asks the user about."""
POLICY = '[approvals]\nask = ["list_agents"]\n'


async def test_a_grandchilds_request_is_elicited_and_the_deny_reason_reaches_it(
    serve, settle
) -> None:
    asked: list[types.ElicitRequestParams] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action="accept", content={"decision": "deny", "reason": "not now"})

    async with serve.project(ASKING, POLICY).stdio(elicit=elicit) as session:
        await start(session)
        await settle(session)
        listed = (await session.list_resources()).resources
        [deep] = [resource for resource in listed if resource.name == "deep"]
        transcript = await session.read_resource(deep.uri)
    deep_id = deep.uri.removeprefix("agent://").removesuffix("/transcript")
    [params] = asked
    assert params.message == f"{deep_id} (deep, depth 2) wants to run list_agents {{}}"
    assert params.requested_schema["properties"]["decision"]["enum"] == [
        "approve", "approve_for_session", "deny"
    ]
    items = json.loads(transcript.contents[0].text)["items"]
    [denied] = [item for item in items if item["type"] == "toolResult"]
    assert (denied["text"], denied["isError"]) == ("the user denied list_agents: not now", True)


async def test_a_client_without_elicitation_gets_the_denial(serve) -> None:
    async with serve.project(REPORTING, POLICY).stdio() as session:
        result = await session.call_tool("list_agents", {})
    assert result.is_error
    assert result.content[0].text == "the user denied list_agents: no terminal to ask"


async def test_an_elicitation_answered_with_an_error_denies_and_keeps_the_client(serve) -> None:
    asked: list[str] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ErrorData:
        asked.append(params.message)
        return types.ErrorData(code=types.INTERNAL_ERROR, message="forms are off\nfor now")

    async with serve.project(REPORTING, POLICY).stdio(elicit=elicit) as session:
        with anyio.fail_after(60):
            results = [await session.call_tool("list_agents", {}) for _ in range(2)]
    assert [(result.is_error, result.content[0].text) for result in results] == [
        (True, "the user denied list_agents: the client answered with an error: forms are off")
    ] * 2
    assert len(asked) == 2


async def test_a_childs_question_is_elicited_with_its_choices_and_answered(serve, settle) -> None:
    script = {
        "research": [
            {"tool_calls": [{"name": "ask_user", "arguments": {
                "question": "Which branch?", "choices": ["main", "dev"],
            }}]},
            "Going with it.",
        ]
    }
    asked: list[types.ElicitRequestParams] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action="accept", content={"answer": "dev"})

    async with serve.project(script).stdio(elicit=elicit) as session:
        child_id = await start(session)
        await settle(session)
        transcript = await session.read_resource(f"agent://{child_id}/transcript")
    [params] = asked
    assert params.message == f"{child_id} (research, depth 1) asks: Which branch? [1 main / 2 dev]"
    assert params.requested_schema["properties"]["answer"]["enum"] == ["main", "dev"]
    items = json.loads(transcript.contents[0].text)["items"]
    [answered] = [item for item in items if item["type"] == "toolResult"]
    assert (answered["text"], answered["isError"]) == ("dev", False)
