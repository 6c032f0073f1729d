"""``run``/``chat --script FILE``: the scripted model answers from a JSON file, through the
real command in a subprocess."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.support import agent_host, closed_port_url, root_log

WORD_COUNT = {"name": "word_count", "arguments": {"text": "one two three"}}


def write(tmp_path: Path, content: Any) -> str:
    path = tmp_path / "script.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path.name


def test_a_tool_round_trip_runs_a_tool_of_the_catalog(tmp_path):
    assert "word_count" in agent_host("tools", cwd=tmp_path).stdout.split()
    script = write(tmp_path, [{"text": "Counting.", "tool_calls": [WORD_COUNT]}, "Three words."])
    result = agent_host("run", "--script", script, "count please", cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (
        0,
        "Counting.\nThree words.\n",
        '⏺ word_count {"text": "one two three"}\n  ⎿ 3 words\n',
    )
    lines = root_log(tmp_path)
    assert '  → word_count {"text": "one two three"}' in lines
    assert "  ← 3 words" in lines


def test_labels_address_children_and_configured_models_are_ignored(tmp_path):
    start = {
        "name": "subagent",
        "arguments": {"description": "count words", "prompt": "Count.", "run_in_background": False},
    }
    script = write(
        tmp_path,
        {
            "user": [{"tool_calls": [start]}, "The child counted three words."],
            "count words": [{"tool_calls": [WORD_COUNT]}, "three"],
        },
    )
    result = agent_host(
        "run",
        "--script",
        script,
        "delegate",
        cwd=tmp_path,
        OPENAI_BASE_URL=closed_port_url(),
        AGENT_HOST_MODEL="m1",
    )
    assert (result.returncode, result.stdout, result.stderr) == (
        0,
        "The child counted three words.\n",
        '⏺ subagent {"description": "count words", "prompt": "Count.", "run_in_background": false}'
        "\n  ⎿ three\n",
    )
    assert any(line.startswith("  ← three") for line in root_log(tmp_path))


def test_a_failed_model_plugin_does_not_stop_a_scripted_run_and_is_a_warning(tmp_path):
    script = write(tmp_path, ["Scripted anyway."])
    broken = {"OPENAI_BASE_URL": "localhost:1/v1", "AGENT_HOST_MODEL": "m1"}
    result = agent_host("run", "--script", script, "hi", cwd=tmp_path, **broken)
    assert (result.returncode, result.stdout) == (0, "Scripted anyway.\n")
    assert result.stderr == (
        "agent-host: warning: plugin openai failed: ConfigError: OPENAI_BASE_URL: "
        "'localhost:1/v1' must start with http:// or https://\n"
    )


def test_chat_takes_a_script_and_unused_entries_are_a_warning(tmp_path):
    script = write(tmp_path, ["first answer", "second answer", "never asked"])
    result = agent_host("chat", "--script", script, cwd=tmp_path, stdin="a\nb\n")
    assert result.returncode == 0
    assert result.stdout == "you> first answer\nyou> second answer\nyou> "
    assert result.stderr == (
        "agent-host: warning: scripted model has unconsumed entries: label 'user': 1 left\n"
    )


@pytest.mark.parametrize(
    ("content", "error"),
    [
        ("", "not JSON: Expecting value (line 1 column 1)"),
        ('{"user": [', "not JSON: Expecting value (line 1 column 11)"),
        ("3", "must be a list of entries or an object mapping agent labels to lists"),
        ({"user": "hi"}, "user: must be a list of entries"),
        ({"": []}, "agent labels must be non-empty"),
        (["ok", 3], "entry 2: must be a string or an object"),
        ([{}], "entry 1: needs text or tool_calls"),
        ([{"txt": "a"}], "entry 1: txt: unknown key (expected text or tool_calls)"),
        ([{"text": 1}], "entry 1: text: must be a string"),
        ([{"tool_calls": []}], "entry 1: tool_calls: must be a non-empty list"),
        ([{"tool_calls": ["add"]}], "entry 1: tool_calls[0]: must be an object"),
        (
            ["a", "b", {"tool_calls": [{"name": " "}]}],
            "entry 3: tool_calls[0].name: must be a non-empty string",
        ),
        (
            {"child": [{"tool_calls": [{"name": "a", "arguments": [1]}]}]},
            "child: entry 1: tool_calls[0].arguments: must be an object",
        ),
        (
            [{"tool_calls": [{"name": "a", "args": {}}]}],
            "entry 1: tool_calls[0].args: unknown key (expected name or arguments)",
        ),
    ],
)
def test_a_bad_script_is_one_line_naming_the_place_and_nothing_runs(tmp_path, content, error):
    script = write(tmp_path, content)
    result = agent_host("run", "--script", script, "hi", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"agent-host: error: script.json: {error}\n"
    assert not (tmp_path / "data").exists()


def test_a_missing_script_is_one_line(tmp_path):
    result = agent_host("chat", "--script", "nowhere.json", cwd=tmp_path, stdin="hi\n")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "agent-host: error: nowhere.json: cannot read it: No such file or directory\n"
    )
