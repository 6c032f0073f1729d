"""``agent-host mcp serve --transport http``: the SDK's client over streamable HTTP, with the
bearer token from the user's home (a request without it is refused): a background child read
through ``read_agent_messages``, and its approval elicited."""

from __future__ import annotations

import urllib.error
import urllib.request
from typing import Any

import mcp_types as types
import pytest

REPORTING = {
    "research": [
        {"tool_calls": [{"name": "report", "arguments": {"output": "Found it."}}]},
        "Research done.",
    ]
}


async def test_a_background_child_is_read_over_streamable_http(serve, settle, port) -> None:
    token = serve.project(REPORTING).http(port)
    async with serve.http_client(port, token) as session:
        started = await session.call_tool("subagent", {"description": "research", "prompt": "Go."})
        child_id = started.structured_content["subagent_id"]
        messages, _after = await settle(session)
    assert [(m["subagent_id"], m["kind"]) for m in messages] == [
        (child_id, "report"), (child_id, "settled")
    ]
    assert messages[0]["text"] == f"Background subagent {child_id} reported:\nFound it."


@pytest.mark.parametrize("authorization", [{"Authorization": "Bearer wrong"}, {}])
def test_a_request_without_the_token_is_refused(serve, port, authorization) -> None:
    serve.project(REPORTING).http(port)
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/mcp", data=b"{}", method="POST",
        headers={"Content-Type": "application/json", **authorization},
    )
    try:
        urllib.request.urlopen(request, timeout=30)
    except urllib.error.HTTPError as refused:
        assert refused.code == 401
        assert refused.read() == b"missing or wrong bearer token\n"
    else:
        raise AssertionError("the request was served")


async def test_two_servers_keep_their_own_tokens_and_remove_them_on_close(
    serve, port, another_port
) -> None:
    first = serve.project(REPORTING).http(port)
    second = serve.http(another_port, "--root", "another")
    assert first != second
    async with serve.http_client(port, serve.token_file(port).read_text().strip()) as session:
        listed = await session.call_tool("list_agents", {})
    assert not listed.is_error, listed.content
    serve.started[1].terminate()
    serve.started[1].wait(30)
    assert not serve.token_file(another_port).exists()
    assert serve.token_file(port).read_text().strip() == first
    errors = (serve.path / "stderr.txt").read_text()
    assert f"(token in {serve.token_file(another_port)})" in errors


async def test_a_childs_approval_is_elicited_over_http(serve, settle, port) -> None:
    script = {"research": [{"tool_calls": [{"name": "list_agents", "arguments": {}}]}, "Listed."]}
    token = serve.project(script, '[approvals]\nask = ["list_agents"]\n').http(port)
    asked: list[str] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"decision": "approve"})

    async with serve.http_client(port, token, elicit) as session:
        started = await session.call_tool("subagent", {"description": "research", "prompt": "Go."})
        child_id = started.structured_content["subagent_id"]
        messages, _after = await settle(session)
    assert asked == [f"{child_id} (research, depth 1) wants to run list_agents {{}}"]
    assert messages[-1]["text"].endswith("Its closing message:\nListed.")


async def test_a_foreground_child_streams_progress_over_http(serve, port) -> None:
    script = {
        "research": [
            {"text": "Looking.", "tool_calls": [{"name": "list_agents", "arguments": {}}]},
            "Found.",
        ]
    }
    token = serve.project(script).http(port)
    progress: list[str | None] = []

    async def heard(value: float, total: float | None, message: str | None) -> None:
        progress.append(message)

    async with serve.http_client(port, token) as session:
        arguments = {"description": "research", "prompt": "Go.", "run_in_background": False}
        result = await session.call_tool("subagent", arguments, progress_callback=heard)
    assert result.content[0].text == "Found."
    assert progress == ["Looking.", "calling list_agents", "Found."]
