"""``thread/start {profile}`` on a real ``agent-host app-server``: the root gets what a child of
the profile gets (persona, tool filter, step limit), every resume applies it again (after a
restart too), and an unknown profile is an error that writes nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_host_openai.testing import completion, tool_call

from tests.appserver.client import Client, text

PERSONA = "You are the terse reviewer. Answer in one word."
PROFILE = f"""---
name: terse-reviewer
description: Reviews in one word
disallowed_tools: [list_agents]
max_steps: 1
memory: user
---
{PERSONA}
"""


def write_profile(tmp_path: Path) -> Path:
    """The user profile ``terse-reviewer`` under the servers' ``AGENT_HOST_HOME``."""
    agents = tmp_path / "home" / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    path = agents / "terse-reviewer.md"
    path.write_text(PROFILE)
    return path


def start(clients: Any, server: Any) -> Client:
    """An initialized app-server whose default model is ``server``'s."""
    client: Client = clients(env={"OPENAI_BASE_URL": server.url, "AGENT_HOST_MODEL": "m1"})
    client.initialize()
    return client


def one_turn(client: Client, server: Any, thread_id: str) -> dict[str, Any]:
    """A turn whose model calls a tool (one step: the step limit of 1 ends it there); the
    request the model got."""
    server.reply(completion(None, [tool_call("c1", "nothing_here", "{}")], "tool_calls"))
    client.call("turn/start", {"threadId": thread_id, "input": text("review this")})
    ended = client.notification("turn/completed")
    assert ended["params"]["stopReason"] == "max_steps"
    body: dict[str, Any] = server.requests[-1].body
    return body


def assert_profile_seen(body: dict[str, Any]) -> None:
    """The model saw the persona in its system prompt, not the tool the profile hides, and the
    profile's memory tools."""
    system = body["messages"][0]
    assert system["role"] == "system" and PERSONA in system["content"]
    names = {t["function"]["name"] for t in body["tools"]}
    assert "list_agents" not in names and "send_message" in names
    assert {"memory_list", "memory_read", "memory_write"} <= names


def refusal(response: dict[str, Any]) -> tuple[int, str, str]:
    """An error response's code, word and message."""
    error = response["error"]
    return error["code"], error["data"]["code"], error["message"]


def stored(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "data").glob("*.jsonl"))


def test_a_root_started_from_a_profile_gets_it_and_again_after_a_restart(
    clients, server, tmp_path
) -> None:
    write_profile(tmp_path)
    first = start(clients, server)
    thread = first.call("thread/start", {"profile": "Terse Reviewer"})["thread"]
    assert_profile_seen(one_turn(first, server, thread["id"]))
    header = json.loads(stored(tmp_path)[0].read_text().splitlines()[0])
    assert (header["label"], header["profile"]) == ("user", "terse-reviewer")
    plain = first.call("thread/start")["thread"]["id"]  # beside it, a root without one
    server.reply(completion("Fine."))
    first.call("turn/start", {"threadId": plain, "input": text("review this")})
    first.notification("turn/completed", threadId=plain, stopReason="completed")
    body = server.requests[-1].body
    assert PERSONA not in body["messages"][0]["content"]
    assert "list_agents" in {t["function"]["name"] for t in body["tools"]}
    first.kill()

    second = start(clients, server)
    second.call("thread/resume", {"threadId": thread["id"]})
    assert_profile_seen(one_turn(second, server, thread["id"]))
    assert second.close()[0] == 0


def test_an_unknown_profile_is_an_error_and_writes_nothing(clients, server, tmp_path) -> None:
    write_profile(tmp_path)
    client = start(clients, server)
    response = client.request("thread/start", {"profile": "nope"})
    known = "Explore, general-purpose, terse-reviewer"
    assert refusal(response) == (
        -32018, "UNKNOWN_PROFILE", f"unknown profile 'nope'; available profiles: {known}"
    )
    assert client.call("thread/list")["threads"] == []
    assert client.close()[0] == 0
    assert stored(tmp_path) == []
    assert server.requests == []


def test_a_profile_whose_mcp_server_is_not_connected_starts_no_root(
    clients, server, tmp_path
) -> None:
    agents = write_profile(tmp_path).parent
    (agents / "github-reader.md").write_text(
        "---\nname: github-reader\ndescription: Reads issues\n"
        "mcp_servers: [github]\n---\nRead.\n"
    )
    client = start(clients, server)
    response = client.request("thread/start", {"profile": "github-reader"})
    missing = 'required MCP server "github" is not connected'
    assert refusal(response) == (-32020, "MCP_SERVER_NOT_CONNECTED", missing)
    assert client.close()[0] == 0
    assert stored(tmp_path) == []


def test_resuming_a_root_whose_profile_is_gone_is_an_error_and_changes_nothing(
    clients, server, tmp_path
) -> None:
    profile = write_profile(tmp_path)
    first = start(clients, server)
    thread_id = first.call("thread/start", {"profile": "terse-reviewer"})["thread"]["id"]
    assert first.close()[0] == 0
    (log,) = stored(tmp_path)
    before = log.read_bytes()
    profile.unlink()

    second = start(clients, server)
    response = second.request("thread/resume", {"threadId": thread_id})
    gone = "unknown profile 'terse-reviewer'; available profiles: Explore, general-purpose"
    assert refusal(response) == (-32018, "UNKNOWN_PROFILE", gone)
    refused = second.request("turn/start", {"threadId": thread_id, "input": text("hi")})
    assert refused["error"]["data"]["code"] == "NOT_LIVE"
    assert second.close()[0] == 0
    assert log.read_bytes() == before


def test_a_root_started_on_its_own_model_resumes_on_it_not_the_profiles(
    clients, server, tmp_path
) -> None:
    path = write_profile(tmp_path)
    path.write_text(PROFILE.replace("max_steps: 1\n", "max_steps: 1\nmodel: other\n"))
    (tmp_path / "agent-host.toml").write_text(
        f'[plugins.openai]\nbase_url = "{server.url}"\nmodel = "m1"\n'
        '[plugins.openai.models.other]\nmodel = "m2"\n'
    )
    first = start(clients, server)
    assert set(first.call("models/list")["models"]) >= {"openai", "other"}
    chosen = {"profile": "terse-reviewer", "model": "openai"}
    thread_id = first.call("thread/start", chosen)["thread"]["id"]
    assert one_turn(first, server, thread_id)["model"] == "m1"
    header = json.loads(stored(tmp_path)[0].read_text().splitlines()[0])
    assert (header["profile"], header["model"]) == ("terse-reviewer", "openai")
    on_profile = first.call("thread/start", {"profile": "terse-reviewer"})["thread"]["id"]
    assert one_turn(first, server, on_profile)["model"] == "m2"
    first.kill()

    second = start(clients, server)
    second.call("thread/resume", {"threadId": thread_id})
    body = one_turn(second, server, thread_id)
    assert body["model"] == "m1"
    assert_profile_seen(body)
    second.call("thread/resume", {"threadId": on_profile})  # no model recorded: the profile's
    assert one_turn(second, server, on_profile)["model"] == "m2"
    assert second.close()[0] == 0
