"""The ``openai`` plugin in a host: configuration, environment, and an agent turn over HTTP."""

from __future__ import annotations

import logging

import agent_host_openai
import attrs
import pytest
from agent_host_openai import Config, OpenAIModel, resolve_settings
from agent_host_openai.testing import Reply, completion, tool_call

from host import hookimpl
from host.sessions.model import TurnEnd
from host.tools import ToolExec, ToolResult, tool
from tests.support import plugin_row, tool_messages

PLUGIN = ("openai", agent_host_openai)


@attrs.frozen
class EchoArgs:
    text: str = attrs.field(metadata={"description": "What to echo."})


@tool("echo", "Echo the text back.", EchoArgs)
async def echo(args: EchoArgs, exec: ToolExec) -> ToolResult:
    return ToolResult(f"echo: {args.text}")


class EchoPlugin:
    @staticmethod
    @hookimpl
    def register_tools(register):
        register(echo)


def openai_model(host, name="openai") -> OpenAIModel:
    model = host.services.get("models").resolve(name)
    assert isinstance(model, OpenAIModel)
    return model


# -- configuration ---------------------------------------------------------------------------


def test_no_configuration_registers_no_model(make_host):
    host = make_host(PLUGIN)
    assert plugin_row(host, "openai")["state"] == "active"
    models = host.services.get("models")
    assert models.names() == ["scripted"]
    assert models.default_name == "scripted"


def test_half_a_configuration_registers_nothing_and_warns(make_host, monkeypatch, caplog):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    with caplog.at_level(logging.WARNING, logger="agent_host_openai"):
        host = make_host(PLUGIN)
    assert host.services.get("models").names() == ["scripted"]
    assert "no model registered: a model id (AGENT_HOST_MODEL) is missing" in caplog.text


def test_configuration_from_the_config_table(make_host):
    config = {
        "plugins": {
            "openai": {
                "base_url": "http://127.0.0.1:9/v1",
                "model": "local-model",
                "timeout": 5,
                "max_retries": 1,
                "name": "local",
            }
        }
    }
    host = make_host(PLUGIN, config=config)
    model = openai_model(host, "local")
    assert (model.base_url, model.model, model.api_key) == (
        "http://127.0.0.1:9/v1",
        "local-model",
        None,
    )
    assert (model.timeout, model.max_retries) == (5.0, 1)
    assert host.services.get("models").names() == ["scripted", "local"]


def test_configuration_from_environment_variables(make_host, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "https://llm.example/v1")
    monkeypatch.setenv("AGENT_HOST_MODEL", "env-model")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    host = make_host(PLUGIN)
    model = openai_model(host)
    assert (model.base_url, model.model, model.api_key) == (
        "https://llm.example/v1",
        "env-model",
        "sk-env",
    )
    assert (model.timeout, model.max_retries) == (60.0, 3)


def test_environment_overrides_the_table_and_api_key_env_is_honoured(make_host, monkeypatch):
    monkeypatch.setenv("AGENT_HOST_MODEL", "env-model")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-ignored")
    monkeypatch.setenv("MY_KEY", "sk-mine")
    config = {
        "plugins": {
            "openai": {
                "base_url": "http://127.0.0.1:9/v1",
                "model": "file-model",
                "api_key_env": "MY_KEY",
            }
        }
    }
    model = openai_model(make_host(PLUGIN, config=config))
    assert (model.model, model.api_key) == ("env-model", "sk-mine")


def test_empty_environment_variables_do_not_override():
    environ = {"OPENAI_BASE_URL": "", "AGENT_HOST_MODEL": "  "}
    settings = resolve_settings(Config(base_url="http://h/v1", model="m"), environ)
    assert settings is not None
    assert (settings.base_url, settings.model) == ("http://h/v1", "m")


@pytest.mark.parametrize(
    ("table", "error"),
    [
        ({"timeout": 0}, "ConfigError: [plugins.openai] timeout: must be greater than 0, got 0.0"),
        (
            {"max_retries": -1},
            "ConfigError: [plugins.openai] max_retries: must be 0 or more, got -1",
        ),
        ({"timeout": "5"}, "ConfigError: [plugins.openai] timeout: expected number, got string"),
        ({"api_key": "sk-x"}, "ConfigError: [plugins.openai] api_key: unknown key"),
        (
            {"base_url": "localhost:8080", "model": "m"},
            "ConfigError: [plugins.openai] base_url: 'localhost:8080' must start with"
            " http:// or https://",
        ),
    ],
)
def test_bad_configuration_is_a_clear_error(make_host, table, error):
    host = make_host(PLUGIN, config={"plugins": {"openai": table}})
    assert (plugin_row(host, "openai")["state"], plugin_row(host, "openai")["error"]) == (
        "failed",
        error,
    )
    assert host.services.get("models").names() == ["scripted"]


def test_a_bad_url_from_the_environment_names_the_variable(make_host, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:99999/v1")
    monkeypatch.setenv("AGENT_HOST_MODEL", "m")
    host = make_host(PLUGIN)
    assert (plugin_row(host, "openai")["state"], plugin_row(host, "openai")["error"]) == (
        "failed",
        "ConfigError: OPENAI_BASE_URL: 'http://127.0.0.1:99999/v1' has an invalid port",
    )


# -- through the host: an agent turn over HTTP -----------------------------------------------


def host_config(server, **table):
    openai = {"base_url": server.url, "model": "test-model", "max_retries": 0, **table}
    return {"plugins": {"openai": openai, "models": {"default": "openai"}}}


async def test_an_agent_turn_with_a_tool_call(make_host, server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server.reply(
        completion(
            "Let me echo.",
            tool_calls=[tool_call("call_1", "echo", '{"text": "ping"}')],
            finish_reason="tool_calls",
        ),
        completion("The tool said: echo: ping"),
    )
    host = make_host(PLUGIN, ("echo", EchoPlugin), config=host_config(server))
    agent = await host.services.get("agents").create(label="worker")
    agent.followup("please echo ping")
    await agent.wait_idle()

    assert agent.last_answer == "The tool said: echo: ping"
    first, second = server.requests
    assert first.headers["authorization"] == "Bearer sk-test"
    assert first.body["model"] == "test-model"
    assert [t["function"]["name"] for t in first.body["tools"]] == ["ask_user", "echo"]
    assert first.body["messages"][-1] == {"role": "user", "content": "please echo ping"}
    assert second.body["messages"][-2:] == [
        {
            "role": "assistant",
            "content": "Let me echo.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "echo", "arguments": '{"text": "ping"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "echo: ping"},
    ]
    ends = [e.body for e in agent.session.events if isinstance(e.body, TurnEnd)]
    assert [end.stop_reason for end in ends] == ["completed"]


async def test_malformed_arguments_become_a_clear_tool_error(make_host, server):
    server.reply(
        completion(
            None,
            tool_calls=[tool_call("call_1", "echo", '{"text": "pi')],
            finish_reason="tool_calls",
        ),
        completion("Sorry, my arguments were broken."),
    )
    host = make_host(PLUGIN, ("echo", EchoPlugin), config=host_config(server))
    agent = await host.services.get("agents").create(model="openai")
    agent.followup("echo ping")
    await agent.wait_idle()

    results = tool_messages(agent)
    assert [(r.content, r.is_error) for r in results] == [
        ("invalid arguments for echo: text: required; _malformed_arguments: unknown key", True)
    ]
    sent = server.bodies()[1]["messages"]
    assert (
        sent[-2]["tool_calls"][0]["function"]["arguments"]
        == '{"_malformed_arguments": "{\\"text\\": \\"pi"}'
    )
    assert agent.last_answer == "Sorry, my arguments were broken."


async def test_a_failing_server_ends_the_turn_with_the_one_line_error(make_host, server):
    server.reply(Reply(401, {"error": {"message": "bad key"}}))
    host = make_host(PLUGIN, config=host_config(server))
    agent = await host.services.get("agents").create()
    agent.followup("hi")
    await agent.wait_idle()
    [end] = [e.body for e in agent.session.events if isinstance(e.body, TurnEnd)]
    assert end.stop_reason == "error"
    assert end.error == (
        f"model server {server.url} requires an API key (401): set OPENAI_API_KEY in the environment"
    )


async def test_interrupting_the_agent_cancels_the_request(make_host, server):
    import asyncio

    server.reply(Reply(delay=5.0, body=completion("too late")))
    host = make_host(PLUGIN, config=host_config(server))
    agent = await host.services.get("agents").create()
    agent.followup("hi")
    while not server.requests:
        await asyncio.sleep(0.01)
    agent.interrupt()
    await asyncio.wait_for(agent.wait_idle(), 2)
    [end] = [e.body for e in agent.session.events if isinstance(e.body, TurnEnd)]
    assert end.stop_reason == "interrupted"


# -- several models --------------------------------------------------------------------------


def test_each_models_table_registers_a_model_with_the_rest_inherited(make_host, monkeypatch):
    monkeypatch.setenv("AGENT_HOST_MODEL", "env-model")
    monkeypatch.setenv("LOCAL_KEY", "sk-local")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-hosted")
    table = {
        "base_url": "http://127.0.0.1:9/v1",
        "model": "hosted",
        "timeout": 5,
        "models": {
            "local": {"model": "qwen", "text_tool_calls": "json", "api_key_env": "LOCAL_KEY"},
            "same": {"model": "mini"},
            "other": {"base_url": "http://127.0.0.1:10/v1"},
            "keyed": {"base_url": "http://127.0.0.1:11/v1", "api_key_env": "LOCAL_KEY"},
        },
    }
    host = make_host(PLUGIN, config={"plugins": {"openai": table}})
    names = ("openai", "local", "same", "other", "keyed")
    hosted, local, same, other, keyed = (openai_model(host, name) for name in names)
    assert (hosted.model, hosted.text_tool_calls, hosted.api_key) == ("env-model", False, "sk-hosted")
    assert (local.base_url, local.model, local.timeout) == ("http://127.0.0.1:9/v1", "qwen", 5)
    assert (local.text_tool_calls, local.api_key) == (True, "sk-local")
    assert (same.base_url, same.api_key) == ("http://127.0.0.1:9/v1", "sk-hosted")
    assert (other.base_url, other.model) == ("http://127.0.0.1:10/v1", "hosted")
    assert other.api_key is None  # its own server: [plugins.openai]'s key is not inherited
    assert keyed.api_key == "sk-local"


async def test_the_hosted_key_is_not_sent_to_a_models_tables_own_server(
    make_host, server, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-hosted")
    server.reply(completion("Hello."))
    table = {
        "base_url": "https://api.example.invalid/v1",
        "model": "hosted",
        "models": {"local": {"base_url": server.url, "model": "qwen", "max_retries": 0}},
    }
    config = {"plugins": {"openai": table, "models": {"default": "local"}}}
    host = make_host(PLUGIN, config=config)
    agent = await host.services.get("agents").create(label="worker")
    agent.followup("hi")
    await agent.wait_idle()
    assert agent.last_answer == "Hello."
    [request] = server.requests
    assert "authorization" not in request.headers


@pytest.mark.parametrize(
    ("entry", "error"),
    [
        (
            {"timeout": -1},
            "ConfigError: [plugins.openai.models.local] timeout: must be greater than 0, got -1.0",
        ),
        ({"name": "x"}, "ConfigError: [plugins.openai.models.local] name: unknown key"),
        (
            {"text_tool_calls": "yes"},
            "ConfigError: [plugins.openai.models.local] text_tool_calls: must be \"off\" or "
            "\"json\", got 'yes'",
        ),
        (
            {"base_url": "ftp://h"},
            "ConfigError: [plugins.openai.models.local] base_url: 'ftp://h' must start with"
            " http:// or https://",
        ),
    ],
)
def test_a_bad_models_table_fails_the_plugin_naming_it(make_host, entry, error):
    table = {"base_url": "http://h/v1", "model": "m", "models": {"local": entry}}
    host = make_host(PLUGIN, config={"plugins": {"openai": table}})
    assert plugin_row(host, "openai")["error"] == error
    assert host.services.get("models").names() == ["scripted"]


def test_a_models_table_cannot_take_the_main_models_name(make_host):
    table = {"base_url": "http://h/v1", "model": "m", "models": {"openai": {}}}
    host = make_host(PLUGIN, config={"plugins": {"openai": table}})
    assert plugin_row(host, "openai")["error"] == (
        "ConfigError: [plugins.openai.models.openai] the name 'openai' is taken or empty"
    )
