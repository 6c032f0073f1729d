"""``agent-host models`` and ``models check`` as subprocesses, against a real loopback server
that speaks chat completions (the openai plugin's ``FakeServer``)."""

from __future__ import annotations

import json

from agent_host_openai.testing import (
    Reply,
    Stream,
    completion,
    rejection_body,
    stream_chunks,
    tool_call,
)

from host.agents.models import ModelRegistry
from host.agents.scripted import ScriptedModel
from host.cli.models import rows
from tests.cli.support import agent_host, configured, timeless

ADD_CALL = tool_call("call_7", "add", '{"a": 17, "b": 25}')


def test_the_listing_names_each_model_and_the_default(tmp_path, server):
    listed = agent_host("models", "--json", cwd=tmp_path, **configured(server))
    assert (listed.returncode, listed.stderr) == (0, "")
    assert json.loads(listed.stdout) == [
        {
            "name": "scripted",
            "default": False,
            "model": "host.agents.scripted.ScriptedModel",
            "streams": True,
        },
        {
            "name": "openai",
            "default": True,
            "model": f"OpenAIModel(base_url={server.url!r}, model='m1')",
            "streams": True,
        },
    ]
    table = agent_host("models", cwd=tmp_path).stdout.splitlines()
    assert table[0].split() == ["name", "default", "streams", "model"]
    assert table[2].split() == ["scripted", "yes", "yes", "host.agents.scripted.ScriptedModel"]
    assert server.requests == []  # listing calls no model


def test_check_probes_the_default_model_over_http(tmp_path, server):
    server.reply(
        completion("Hello there, tester."),
        Stream(stream_chunks("Hi from the stream.")),
        completion(None, [ADD_CALL], "tool_calls"),
        completion("The sum is 42."),
    )
    result = agent_host("models", "check", cwd=tmp_path, **configured(server))
    assert (result.returncode, result.stderr) == (0, "")
    assert timeless(result.stdout) == (
        f"checking openai: OpenAIModel(base_url={server.url!r}, model='m1')\n"
        "plain   ok   (T s) Hello there, tester.\n"
        "stream  ok   (T s) Hi from the stream.\n"
        "tools   ok   (T s) The sum is 42.\n"
    )
    streamed, asked, answered = server.bodies()[1:]
    assert streamed["stream"] is True
    assert asked["stream"] is True  # the round trip goes the way an agent's calls go
    assert [body["max_tokens"] for body in server.bodies()] == [96] * 4  # short answers only
    assert [tool["function"]["name"] for tool in asked["tools"]] == ["add"]
    assert answered["messages"][-1] == {"role": "tool", "tool_call_id": "call_7", "content": "42"}
    assert all(request.rejected is None for request in server.requests)


def test_check_exits_1_with_the_servers_own_words(tmp_path, server):
    server.reply(
        completion("Hello."),
        Stream(stream_chunks("Hi.")),
        Reply(400, rejection_body("tools are not supported by this model")),
    )
    (tmp_path / "agent-host.toml").write_text("[plugins.openai]\nmax_retries = 0\n")
    result = agent_host("models", "check", "openai", cwd=tmp_path, **configured(server))
    assert result.returncode == 1
    tools_line = result.stdout.splitlines()[-1]
    assert tools_line.startswith(f"tools   failed  model server {server.url} rejected the request")
    assert tools_line.endswith("tools are not supported by this model")


def test_check_of_the_scripted_model_fails_the_tool_round_trip(tmp_path):
    result = agent_host("models", "check", cwd=tmp_path)
    assert result.returncode == 1
    assert timeless(result.stdout).splitlines() == [
        "checking scripted: host.agents.scripted.ScriptedModel",
        "plain   ok   (T s) scripted reply: Reply with a short greeting of at most five",
        "stream  ok   (T s) scripted reply: Reply with a short greeting of at most five",
        "tools   failed  the model answered without calling add: 'scripted reply: Use the add "
        "tool to add 17 and 25, then tell'",
    ]


def test_an_unknown_name_is_the_registrys_one_line_error(tmp_path):
    result = agent_host("models", "check", "gpt-9", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        'agent-host: error: model "gpt-9" is not registered (known: scripted)\n'
    )


def test_a_failed_model_plugin_stops_check_and_is_a_warning_of_the_listing(tmp_path):
    broken = {"OPENAI_BASE_URL": "localhost:8080", "AGENT_HOST_MODEL": "m1"}
    line = (
        "plugin openai failed: ConfigError: OPENAI_BASE_URL: 'localhost:8080' must start with "
        "http:// or https://"
    )
    check = agent_host("models", "check", cwd=tmp_path, **broken)
    assert (check.returncode, check.stdout, check.stderr) == (2, "", f"agent-host: error: {line}\n")
    listed = agent_host("models", cwd=tmp_path, **broken)
    assert (listed.returncode, listed.stderr) == (0, f"agent-host: warning: {line}\n")


def test_a_model_that_cannot_be_built_is_a_row_saying_why():
    registry = ModelRegistry(fallback="scripted")
    registry.register("scripted", ScriptedModel)
    registry.register("broken", lambda: dict[str, ScriptedModel]()["api_key"])
    assert rows(registry) == [
        {
            "name": "scripted",
            "default": False,
            "model": "host.agents.scripted.ScriptedModel",
            "streams": True,
        },
        {
            "name": "broken",
            "default": True,
            "model": "cannot be built: KeyError: 'api_key'",
            "streams": False,
        },
    ]
