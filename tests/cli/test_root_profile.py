"""``agent-host run``/``chat --profile NAME``: the root gets the profile's persona and tool
filter, as ``thread/start {profile}`` gives them; an unknown profile, or one given with
``--resume``/``--continue``, is one line, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

from agent_host_openai.testing import FakeServer, completion

from tests.cli.support import agent_host

PERSONA = "You are the terse reviewer. Answer in one word."


def environment(tmp_path: Path, server: FakeServer) -> dict[str, str]:
    """``server``'s model, and an ``AGENT_HOST_HOME`` holding the user profile
    ``terse-reviewer``."""
    agents = tmp_path / "home" / "agents"
    agents.mkdir(parents=True)
    (agents / "terse-reviewer.md").write_text(
        "---\nname: terse-reviewer\ndescription: Reviews in one word\n"
        f"disallowed_tools: [list_agents]\n---\n{PERSONA}\n"
    )
    home = str(tmp_path / "home")
    return {"OPENAI_BASE_URL": server.url, "AGENT_HOST_MODEL": "m1", "AGENT_HOST_HOME": home}


def test_run_and_chat_start_the_root_from_the_profile(tmp_path, server) -> None:
    server.reply(completion("Fine."), completion("Good."))
    env = environment(tmp_path, server)
    ran = agent_host("run", "--profile", "terse-reviewer", "review", cwd=tmp_path, **env)
    chatted = agent_host(
        "chat", "--profile", "terse-reviewer", cwd=tmp_path, stdin="review\n", **env
    )
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, "Fine.\n", "")
    assert (chatted.returncode, chatted.stderr) == (0, "")
    for request in server.requests:
        assert PERSONA in request.body["messages"][0]["content"]
        assert "list_agents" not in {t["function"]["name"] for t in request.body["tools"]}
    headers = [json.loads(p.read_text().splitlines()[0]) for p in (tmp_path / "data").glob("*")]
    assert [h["profile"] for h in headers] == ["terse-reviewer", "terse-reviewer"]


def test_run_with_an_unknown_profile_is_one_line_and_writes_nothing(tmp_path, server) -> None:
    env = environment(tmp_path, server)
    result = agent_host("run", "--profile", "nope", "review", cwd=tmp_path, **env)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "agent-host: error: unknown profile 'nope'; available profiles: "
        "Explore, general-purpose, terse-reviewer\n"
    )
    assert not (tmp_path / "data").exists() and server.requests == []


def test_run_resume_applies_the_roots_profile_again(tmp_path, server) -> None:
    server.reply(completion("Fine."), completion("Still fine."))
    env = environment(tmp_path, server)
    assert agent_host("run", "--profile", "terse-reviewer", "one", cwd=tmp_path, **env).returncode == 0
    [log] = (tmp_path / "data").glob("*.jsonl")
    resumed = agent_host("run", "--resume", log.stem, "two", cwd=tmp_path, **env)
    assert (resumed.returncode, resumed.stdout) == (0, "Still fine.\n")
    second = server.requests[1].body
    assert PERSONA in second["messages"][0]["content"]
    assert [m["content"] for m in second["messages"] if m["role"] == "user"] == ["one", "two"]
    assert "list_agents" not in {t["function"]["name"] for t in second["tools"]}


def test_a_profile_with_resume_or_continue_is_refused_in_one_line(tmp_path, server) -> None:
    server.reply(completion("Fine."))
    env = environment(tmp_path, server)
    assert agent_host("run", "one", cwd=tmp_path, **env).returncode == 0
    [log] = (tmp_path / "data").glob("*.jsonl")
    stored = log.read_bytes()
    for command in (
        ["run", "--resume", log.stem, "--profile", "nope", "again"],
        ["run", "--profile", "terse-reviewer", "--resume", log.stem, "again"],
        ["chat", "--continue", "--profile", "terse-reviewer"],
        ["chat", "--profile", "nope", "--resume", log.stem],
    ):
        result = agent_host(*command, cwd=tmp_path, stdin="again\n", **env)
        assert (result.returncode, result.stdout) == (2, ""), command
        assert result.stderr == (
            "agent-host: error: --profile starts a new conversation; a resumed conversation "
            "keeps the profile it started with\n"
        ), command
    assert log.read_bytes() == stored and len(server.requests) == 1
