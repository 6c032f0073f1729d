"""``agent-host run`` and ``chat`` as subprocesses: the scripted fallback, a real model server,
text printed as it streams, failed model plugins refused, and exit codes."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import time

import pytest
from agent_host_openai.testing import Reply, Stream, completion, rejection_body, stream_chunks

from host.agents.models import ModelResponse, TextDelta, ToolCallDelta
from host.cli.chat import SCRIPTED_NOTICE, AnswerPrinter
from tests.cli.support import AGENT_HOST, agent_host, closed_port_url
from tests.distributions import write_distribution


def test_run_without_a_model_uses_the_scripted_one_with_a_notice(tmp_path):
    result = agent_host("run", "hello there", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "scripted reply: hello there\n")
    assert result.stderr == SCRIPTED_NOTICE + "\n"


def test_run_uses_the_configured_model_server(tmp_path, server):
    server.reply(completion("Hello from the server."))
    result = agent_host(
        "run", "hi", cwd=tmp_path, OPENAI_BASE_URL=server.url, AGENT_HOST_MODEL="m1"
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "Hello from the server.\n", "")
    body = server.requests[0].body
    assert body["model"] == "m1"
    assert body["messages"][-1] == {"role": "user", "content": "hi"}


def test_a_model_that_does_not_stream_has_its_answer_printed_whole(tmp_path, server):
    server.reply(completion("Hello, not streamed."))
    (tmp_path / "agent-host.toml").write_text("[plugins.openai]\nstream = false\n")
    result = agent_host(
        "run", "hi", cwd=tmp_path, OPENAI_BASE_URL=server.url, AGENT_HOST_MODEL="m1"
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "Hello, not streamed.\n", "")
    assert "stream" not in server.requests[0].body


def test_run_prints_a_streamed_answer_as_it_arrives(tmp_path, server):
    server.reply(Stream(stream_chunks("Hello from a stream.")))
    result = agent_host(
        "run", "hi", cwd=tmp_path, OPENAI_BASE_URL=server.url, AGENT_HOST_MODEL="m1"
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "Hello from a stream.\n", "")
    assert server.requests[0].body["stream"] is True


def test_an_unreachable_server_is_one_line_and_a_failure(tmp_path):
    (tmp_path / "agent-host.toml").write_text("[plugins.openai]\nmax_retries = 0\n")
    url = closed_port_url()
    result = agent_host("run", "hi", cwd=tmp_path, OPENAI_BASE_URL=url, AGENT_HOST_MODEL="m1")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == (
        f"agent-host: turn ended (error): model server {url} is unreachable: connection refused\n"
    )


def test_chat_answers_each_line_until_end_of_input(tmp_path):
    result = agent_host("chat", cwd=tmp_path, stdin="first\n\nsecond\n")
    assert result.returncode == 0
    assert result.stdout == "you> scripted reply: first\nyou> you> scripted reply: second\nyou> "


def test_chat_exits_1_when_a_turn_failed(tmp_path, server):
    server.reply(
        Stream(stream_chunks("First answer.")), Reply(400, rejection_body("context too long"))
    )
    result = agent_host(
        "chat",
        cwd=tmp_path,
        stdin="one\ntwo\n",
        OPENAI_BASE_URL=server.url,
        AGENT_HOST_MODEL="m1",
    )
    assert result.returncode == 1
    assert result.stdout == "you> First answer.\nyou> you> "
    assert result.stderr.startswith("agent-host: turn ended (error): model server ")
    assert "context too long" in result.stderr


BROKEN_URL = "127.0.0.1:1/v1"
BROKEN_URL_ERROR = (
    "agent-host: error: plugin openai failed: ConfigError: OPENAI_BASE_URL: "
    f"'{BROKEN_URL}' must start with http:// or https://\n"
)


@pytest.mark.parametrize("command", [["run", "hi"], ["chat"], ["dev"]])
def test_a_failed_model_plugin_stops_the_commands_that_talk_to_a_model(tmp_path, command):
    result = agent_host(
        *command, cwd=tmp_path, stdin="hi\n", OPENAI_BASE_URL=BROKEN_URL, AGENT_HOST_MODEL="x"
    )
    assert (result.returncode, result.stdout, result.stderr) == (2, "", BROKEN_URL_ERROR)
    assert not (tmp_path / "data").exists()  # no agent started, no session written


def test_a_bad_table_of_a_model_plugin_is_refused_too(tmp_path):
    (tmp_path / "agent-host.toml").write_text('[plugins.openai]\ntimeout = "soon"\n')
    result = agent_host("run", "hi", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "agent-host: error: plugin openai failed: "
        "ConfigError: [plugins.openai] timeout: expected number, got string\n"
    )


def test_a_failed_plugin_that_registers_no_model_does_not_stop_run(tmp_path):
    (tmp_path / "agent-host.toml").write_text('[plugins.word_count]\nmax_words = "many"\n')
    result = agent_host("run", "hi", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "scripted reply: hi\n")


def printed(*events: object) -> str:
    out = io.StringIO()
    printer = AnswerPrinter(out)
    for event in events:
        printer(event)  # type: ignore[arg-type]
    printer.end_line()
    return out.getvalue()


def test_the_printer_writes_deltas_and_ends_each_call_with_one_line_break():
    assert printed(TextDelta("Hel"), TextDelta("lo"), ModelResponse("Hello")) == "Hello\n"
    assert printed(ModelResponse("Not streamed")) == "Not streamed\n"
    assert printed(ToolCallDelta(0, "c1", "add", "{}"), ModelResponse()) == ""
    assert printed(TextDelta("ends itself\n"), ModelResponse("ends itself\n")) == "ends itself\n"
    assert printed(TextDelta("cut sh")) == "cut sh\n"  # an interrupted stream's line is ended
    assert printed(ModelResponse("a"), ModelResponse("b")) == "a\nb\n"


def test_after_a_stream_cut_short_the_next_unstreamed_answer_is_printed():
    out = io.StringIO()
    printer = AnswerPrinter(out)
    printer(TextDelta("cut sh"))
    printer.end_turn()  # the turn ended without a response (interrupted)
    printer(ModelResponse("Whole answer."))  # e.g. after /model, a model that does not stream
    assert out.getvalue() == "cut sh\nWhole answer.\n"


HOLD_SOURCE = '''
import asyncio
from pathlib import Path

from host import hookimpl
from host.tools import tool


@tool
async def hold() -> str:
    """Wait until a file called held exists, having made one called holding."""
    Path("holding").touch()
    while not Path("held").exists():
        await asyncio.sleep(0.05)
    return "released"


@hookimpl
def register_tools(register):
    register(hold)
'''


def test_ctrl_c_during_run_is_one_line_exit_130_and_a_closed_log(tmp_path):
    site = tmp_path / "site"
    write_distribution(
        site, "holder", entry_points={"holder": "holder"}, modules={"holder": HOLD_SOURCE}
    )
    script = {"user": [{"text": "Holding.", "tool_calls": [{"name": "hold", "arguments": {}}]}]}
    (tmp_path / "script.json").write_text(json.dumps(script))
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_HOST_", "OPENAI_"))}
    environ.update(PYTHONPATH=str(site), AGENT_HOST_HOME=str(tmp_path / "home"), NO_COLOR="1")
    command = [AGENT_HOST, "--data-dir", str(tmp_path / "data"), "run", "--script", "script.json"]
    process = subprocess.Popen(
        [*command, "go"], cwd=tmp_path, env=environ, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
        # as from an interactive shell: a test run started in the background (where SIGINT is
        # ignored, and the ignoring inherited) must still give it a Ctrl-C to react to
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "holding").exists():  # the tool call is in flight
            assert time.monotonic() < deadline and process.poll() is None, process.communicate()
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()  # never outlive the test (a no-op once it ended)
    assert (process.returncode, out) == (130, "Holding.\n")
    assert err == "⏺ hold {}\nagent-host: turn ended (interrupted)\nagent-host: interrupted\n"
    (root,) = [row["id"] for row in json.loads(
        agent_host("sessions", "list", "--json", cwd=tmp_path).stdout
    )]
    log = agent_host("sessions", "show", root, cwd=tmp_path).stdout
    assert log.rstrip().endswith("  ✗ tool call was interrupted before it finished\n  [turn ended: interrupted]")
