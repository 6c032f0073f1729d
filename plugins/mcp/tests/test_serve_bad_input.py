"""Bad input to ``agent-host mcp serve``: each gets its documented error text (docs/subagents.md) or one line, and
nothing is written; a client that leaves mid-poll or mid-elicitation ends the server cleanly,
deciding nothing; a second server on the same root is refused."""

from __future__ import annotations

import json
import socket
import subprocess
from typing import Any

import anyio
import mcp_types as types

REPORTING = {
    "research": [
        {"tool_calls": [{"name": "report", "arguments": {"output": "Found it."}}]},
        "Research done.",
    ]
}


def snapshot(serve: Any) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in (serve.path / "data").glob("*.jsonl")}


async def test_bad_calls_get_one_line_each_and_write_nothing(serve, settle) -> None:
    async with serve.project(REPORTING).stdio() as session:
        started = await session.call_tool("subagent", {"description": "research", "prompt": "Go."})
        child_id = started.structured_content["subagent_id"]
        await settle(session)
        before = snapshot(serve)
        said = {}
        for name, arguments in [
            ("send_message", {"subagent_id": 5, "message": "hi"}),
            ("send_message", {"subagent_id": "nope", "message": "hi"}),
            ("list_agents", {"scope": "everyone"}),
            ("read_agent_messages", {"wait_seconds": "soon"}),
            ("read_agent_messages", {"wait_seconds": 61}),
            ("read_agent_messages", {"after": "abc"}),
            ("read_agent_messages", {"after": "99999"}),
            ("read_agent_messages", {"later": 1}),
            ("run_command", {"command": "ls"}),
        ]:
            result = await session.call_tool(name, arguments)
            assert result.is_error, (name, arguments)
            said[f"{name} {json.dumps(arguments)}"] = result.content[0].text
        after = snapshot(serve)
    assert said == {
        'send_message {"subagent_id": 5, "message": "hi"}':
            "invalid arguments for send_message: subagent_id: expected string, got integer",
        'send_message {"subagent_id": "nope", "message": "hi"}':
            'message was not delivered: subagent "nope" is unavailable',
        'list_agents {"scope": "everyone"}':
            "invalid arguments for list_agents: scope: must be one of 'children', 'descendants'",
        'read_agent_messages {"wait_seconds": "soon"}':
            "invalid arguments for read_agent_messages: wait_seconds: expected number, got string",
        'read_agent_messages {"wait_seconds": 61}':
            "invalid arguments for read_agent_messages: wait_seconds: must be from 0 to 60",
        'read_agent_messages {"after": "abc"}':
            "invalid arguments for read_agent_messages: after: 'abc' is not a cursor "
            "read_agent_messages returned",
        'read_agent_messages {"after": "99999"}':
            "invalid arguments for read_agent_messages: after: '99999' is not a cursor "
            "read_agent_messages returned",
        'read_agent_messages {"later": 1}':
            "invalid arguments for read_agent_messages: later: unknown key",
        'run_command {"command": "ls"}': 'unknown tool "run_command"',
    }
    assert child_id
    assert after == before


async def test_another_roots_child_is_out_of_reach(serve, settle) -> None:
    serve.project(REPORTING)
    async with serve.stdio("--root", "one") as session:
        started = await session.call_tool("subagent", {"description": "research", "prompt": "Go."})
        child_id = started.structured_content["subagent_id"]
        await settle(session)
    async with serve.stdio("--root", "two") as session:
        sent = await session.call_tool("send_message", {"subagent_id": child_id, "message": "hi"})
        listed = await session.call_tool("list_agents", {})
        try:
            await session.read_resource(f"agent://{child_id}/transcript")
        except Exception as error:
            refused = str(error)
        else:
            raise AssertionError("another root's transcript was read")
    assert sent.is_error
    assert sent.content[0].text == (
        f'message was not delivered: subagent "{child_id}" belongs to another parent session'
    )
    assert listed.content[0].text == "(no subagents)"
    assert refused == f"no resource 'agent://{child_id}/transcript': not a subagent of this root"


def rpc(process: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
    process.stdin.flush()


def test_a_client_that_leaves_mid_poll_ends_the_server_cleanly(serve) -> None:
    process = subprocess.Popen(
        serve.project(REPORTING).command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env=serve.environment(), cwd=serve.path,
    )
    rpc(process, {"id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    }})
    assert process.stdout is not None
    assert json.loads(process.stdout.readline())["id"] == 1
    rpc(process, {"method": "notifications/initialized"})
    rpc(process, {"id": 2, "method": "tools/call", "params": {
        "name": "read_agent_messages", "arguments": {"wait_seconds": 60},
    }})
    _out, errors = process.communicate(b"", timeout=50)  # stdin closes: the client left
    assert process.returncode == 0, errors
    assert b"Traceback" not in errors


def test_a_second_server_on_the_same_root_is_refused(serve) -> None:
    first = subprocess.Popen(
        serve.project(REPORTING).command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, env=serve.environment(), cwd=serve.path,
    )
    try:
        rpc(first, {"id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        }})
        assert first.stdout is not None
        assert json.loads(first.stdout.readline())["id"] == 1  # the root is open
        second = subprocess.run(
            serve.command(), stdin=subprocess.DEVNULL, capture_output=True, text=True,
            env=serve.environment(), cwd=serve.path, timeout=60,
        )
    finally:
        first.communicate(b"", timeout=50)
    [root] = [p.stem for p in (serve.path / "data").glob("mcp-*.jsonl")]
    assert second.returncode == 2
    assert second.stderr == f'agent-host: error: thread "{root}" is in use by another process\n'
    assert second.stdout == ""


async def test_a_client_that_leaves_mid_elicitation_decides_nothing(serve, settle) -> None:
    script = {"research": [{"tool_calls": [{"name": "list_agents", "arguments": {}}]}, "Listed."]}
    asked = anyio.Event()

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    policy = '[approvals]\nask = ["list_agents"]\n'
    async with serve.project(script, policy).stdio(elicit=elicit) as session:
        await session.call_tool("subagent", {"description": "research", "prompt": "Go."})
        with anyio.fail_after(60):
            await asked.wait()
    [child_log] = (serve.path / "data").glob("sub_*.jsonl")
    kinds = [
        event["kind"] for event in map(json.loads, child_log.read_text().splitlines()[1:])
        if event["kind"].startswith("approval/")
    ]
    assert kinds == ["approval/requested"]  # left open: asked again when the child resumes
    assert "Traceback" not in (serve.path / "stderr.txt").read_text()
    again: list[str] = []

    async def approve(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        again.append(params.message)
        return types.ElicitResult(action="accept", content={"decision": "approve"})

    serve.project({"research": ["Listed."]}, policy)
    async with serve.stdio(elicit=approve) as session:  # the next process resumes the child
        messages, _after = await settle(session)
    child_id = child_log.stem
    assert again == [f"{child_id} (research, depth 1) wants to run list_agents {{}}"]
    assert messages[-1]["text"].endswith("Its closing message:\nListed.")


def test_a_port_in_use_is_one_line(serve) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        ran = subprocess.run(
            serve.project(REPORTING).command("--transport", "http", "--port", str(port)),
            stdin=subprocess.DEVNULL, capture_output=True, text=True,
            env=serve.environment(), cwd=serve.path, timeout=60,
        )
    assert ran.returncode == 2
    assert ran.stderr == (
        f"agent-host: error: cannot listen on 127.0.0.1:{port}: Address already in use\n"
    )
