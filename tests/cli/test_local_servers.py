"""``models check`` and ``run`` against what local servers really do, as subprocesses over the
strict loopback server: calls written as text, a server that cannot answer with text while
tools are offered, a model id the server does not serve, answers cut at ``max_tokens``, and
tool calls shown while the model works."""

from __future__ import annotations

import json

from agent_host_openai.testing import Stream, completion, stream_chunks, text_call, tool_call

from tests.cli.support import agent_host, configured, timeless

ONLY_WORD_COUNT = (
    *("--no-plugin", "approvals", "--no-plugin", "list_agents"),
    *("--no-plugin", "subagent", "--no-plugin", "subagent_control"),
    *("--no-plugin", "workspace"),
)
ADD = [("add", {"a": 17, "b": 25})]


def configure(tmp_path, **table: object) -> None:
    lines = ["[plugins.openai]", "max_retries = 0"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in table.items()]
    (tmp_path / "agent-host.toml").write_text("\n".join(lines) + "\n")


def greetings(server) -> None:
    server.reply(completion("Hello."), Stream(stream_chunks("Hi there.")))


# -- models check ----------------------------------------------------------------------------


def test_check_names_a_call_written_as_text(tmp_path, server):
    greetings(server)
    server.reply(Stream(stream_chunks(text_call(ADD))))
    configure(tmp_path)
    result = agent_host("models", "check", cwd=tmp_path, **configured(server))
    assert result.returncode == 1
    assert result.stdout.splitlines()[-1] == (
        'tools   failed  the model wrote the call as text; set text_tool_calls = "json"'
    )


def test_check_passes_with_text_tool_calls_json(tmp_path, server):
    greetings(server)
    server.reply(Stream(stream_chunks(text_call(ADD, "fence"))), completion("The sum is 42."))
    configure(tmp_path, text_tool_calls="json")
    result = agent_host("models", "check", cwd=tmp_path, **configured(server))
    assert (result.returncode, result.stderr) == (0, "")
    assert timeless(result.stdout).splitlines()[1:] == [
        "plain   ok   (T s) Hello.",
        "stream  ok   (T s) Hi there.",
        "tools   ok   (T s) The sum is 42.",
    ]
    answered = server.requests[-1]
    assert answered.rejected is None
    call, result_message = answered.body["messages"][-2:]
    assert (call["content"], call["tool_calls"][0]["function"]) == (
        "",
        {"name": "add", "arguments": '{"a": 17, "b": 25}'},
    )
    assert result_message == {"role": "tool", "tool_call_id": call["tool_calls"][0]["id"],
                              "content": "42"}


NO_TEXT = (
    "tools   failed  the server cannot answer with text while tools are offered (after the "
    "tool result it sent {}): use another chat format (llama-cpp-python's "
    "chatml-function-calling cannot) or another server (llama-server --jinja)"
)


def refusing_to_stream_tools(server, answer, *, attempt: bool = True) -> None:
    """llama-cpp-python's chatml-function-calling: a streamed request with tools gets an
    empty event stream (when ``attempt``ed); made whole, it calls; after the result it
    cannot say text."""
    greetings(server)
    if attempt:
        server.reply(Stream([], done=False))
    call = tool_call("call_1", "add", '{"a": 17, "b": 25}')
    server.reply(completion(None, [call], "tool_calls"), answer)


def test_check_explains_a_server_that_cannot_answer_with_text_while_tools_are_offered(
    tmp_path, server
):
    refusing_to_stream_tools(server, completion("functions.add:"))
    configure(tmp_path)
    result = agent_host("models", "check", cwd=tmp_path, **configured(server))
    assert result.returncode == 1
    assert result.stdout.splitlines()[-1] == NO_TEXT.format("the stub 'functions.add:'")
    assert result.stderr == (
        f"agent-host: warning: model server {server.url} sent no event for a streamed request "
        "with tools: such requests are no longer streamed (set stream_tools = false in "
        "[plugins.openai] to skip the attempt)\n"
    )


def test_an_empty_answer_after_the_result_is_explained_too(tmp_path, server):
    refusing_to_stream_tools(server, completion(""), attempt=False)
    configure(tmp_path, stream_tools=False)
    result = agent_host("models", "check", cwd=tmp_path, **configured(server))
    assert (result.returncode, result.stderr) == (1, "")
    assert result.stdout.splitlines()[-1] == NO_TEXT.format("an empty answer")


def test_check_warns_when_the_server_serves_another_model(tmp_path, server):
    server.models = ["qwen2.5-coder-0.5b"]
    greetings(server)
    server.reply(completion(None, [tool_call("c", "add", '{"a": 17, "b": 25}')]), completion("42"))
    configure(tmp_path)
    result = agent_host("models", "check", cwd=tmp_path, **configured(server))
    assert result.returncode == 0
    assert result.stderr == (
        "agent-host: warning: the server serves 'qwen2.5-coder-0.5b', not the configured model "
        "'m1' (a single-model server answers with its model whatever the id)\n"
    )


def test_check_is_quiet_when_the_server_serves_the_model(tmp_path, server):
    server.models = ["other", "m1"]
    greetings(server)
    server.reply(completion(None, [tool_call("c", "add", '{"a": 17, "b": 25}')]), completion("42"))
    configure(tmp_path)
    result = agent_host("models", "check", cwd=tmp_path, **configured(server))
    assert (result.returncode, result.stderr) == (0, "")


# -- run -------------------------------------------------------------------------------------


def test_run_shows_each_tool_call_and_its_result_on_stderr(tmp_path, server):
    count = [("word_count", {"text": "one two three four five"})]
    server.reply(
        Stream(stream_chunks(text_call(count, "tags"))),
        Stream(stream_chunks("The text has 5 words.")),
    )
    configure(tmp_path, text_tool_calls="json")
    result = agent_host(
        *ONLY_WORD_COUNT, "run", "Count the words", cwd=tmp_path, **configured(server)
    )
    assert (result.returncode, result.stdout) == (0, "The text has 5 words.\n")
    assert result.stderr == (
        '⏺ word_count {"text": "one two three four five"}\n  ⎿ 5 words\n'
    )
    assert [t["function"]["name"] for t in server.requests[0].body["tools"]] == ["word_count"]


def test_run_says_an_answer_was_cut_at_max_tokens_and_exits_1(tmp_path, server):
    server.reply(Stream(stream_chunks("A long answer that", finish_reason="length")))
    configure(tmp_path, max_tokens=5)
    result = agent_host("run", "Tell me a story", cwd=tmp_path, **configured(server))
    assert (result.returncode, result.stdout) == (1, "A long answer that\n")
    assert result.stderr == "agent-host: answer cut at max_tokens (5)\n"
