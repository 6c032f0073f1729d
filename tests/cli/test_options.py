"""Command-line options where users type them: the global ones after the command too, and
help text on every option of every command."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from host.cli.main import build_parser
from tests.cli.support import agent_host


def parsers(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    """Every command's parser, by its usage name, the top one first."""
    found = [(parser.prog, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                found += parsers(sub)
    return found


@pytest.mark.parametrize(
    ("argv", "data_dir", "blocked"),
    [
        (["run", "--data-dir", "D", "hello"], Path("D"), []),
        (["run", "hello", "--data-dir", "D"], Path("D"), []),
        (["--data-dir", "A", "run", "hello"], Path("A"), []),
        (["--data-dir", "A", "run", "--data-dir", "B", "hello"], Path("B"), []),
        (["plugins", "--no-plugin", "X"], None, ["X"]),
        (["--no-plugin", "X", "sessions", "list", "--no-plugin", "Y"], None, ["Y"]),
        (["dev", "--data-dir", "D"], Path("D"), []),
        (["demo", "--data-dir", "D"], Path("D"), []),
        (["mcp", "trust", "git", "--data-dir", "D"], Path("D"), []),
    ],
)
def test_global_options_are_taken_before_and_after_the_command(argv, data_dir, blocked):
    args = build_parser().parse_args(argv)
    assert (args.data_dir, args.no_plugin) == (data_dir, blocked)


def test_debug_and_config_after_the_command():
    args = build_parser().parse_args(["chat", "--debug", "--config", "c.toml"])
    assert (args.debug, args.config) == (True, Path("c.toml"))
    assert build_parser().parse_args(["--debug", "chat"]).debug is True


def test_every_option_of_every_command_has_help_text():
    missing = [
        f"{prog} {'/'.join(action.option_strings) or action.dest}"
        for prog, parser in parsers(build_parser())
        for action in parser._actions
        if not isinstance(action, argparse._SubParsersAction) and not action.help
    ]
    assert missing == []


def test_dev_help_names_the_data_directory_d():
    (dev,) = [parser for prog, parser in parsers(build_parser()) if prog == "agent-host dev"]
    text = dev.format_help()
    assert "--data-dir D" in text and "DEMO_DATA_DIR" not in text


def test_a_data_directory_given_after_the_command_is_used(tmp_path):
    result = agent_host("run", "--data-dir", str(tmp_path / "later"), "hello", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert list((tmp_path / "later").glob("agent_*.jsonl"))
    assert not list((tmp_path / "data").glob("agent_*.jsonl"))
