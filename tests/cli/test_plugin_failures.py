"""Failed plugins through the real CLI: ``plugins --check``, and a warning line at the start
of every command that runs agents (``run``, ``chat``, ``dev``, ``demo``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from host.cli.chat import SCRIPTED_NOTICE
from tests.cli.support import agent_host
from tests.distributions import write_distribution

BRITTLE_SOURCE = """
from host import hookimpl

requires = ("agents",)

@hookimpl
def activate(scope):
    pass
"""

FAILURE = (
    "plugin brittle failed: ConfigError: [plugins.brittle] level: "
    "this plugin takes no configuration"
)


@pytest.fixture
def site(tmp_path: Path) -> str:
    """``PYTHONPATH`` holding ``brittle``, which fails on the table ``agent-host.toml`` gives
    it (it takes no configuration), and ``sturdy``, which activates."""
    directory = tmp_path / "site"
    for name in ("brittle", "sturdy"):
        write_distribution(
            directory,
            name,
            entry_points={name: f"{name}_cli"},
            modules={f"{name}_cli": BRITTLE_SOURCE},
        )
    (tmp_path / "agent-host.toml").write_text("[plugins.brittle]\nlevel = 1\n")
    return str(directory)


def test_check_exits_1_naming_each_failed_plugin_under_the_listing(tmp_path: Path, site: str):
    result = agent_host("plugins", "--check", cwd=tmp_path, PYTHONPATH=site)
    assert (result.returncode, result.stderr) == (1, f"agent-host: {FAILURE}\n")
    row = next(line.split() for line in result.stdout.splitlines() if line.startswith("brittle"))
    assert row[:5] == ["brittle", "failed", "brittle", "1.0", "agents"]
    listed = agent_host("plugins", "--check", "--json", cwd=tmp_path, PYTHONPATH=site)
    assert (listed.returncode, listed.stderr) == (1, f"agent-host: {FAILURE}\n")
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert (rows["brittle"]["state"], rows["brittle"]["requires"]) == ("failed", ["agents"])
    assert rows["sturdy"]["state"] == "active"


def test_without_check_a_failed_plugin_does_not_change_the_exit_status(tmp_path: Path, site: str):
    for command in (["plugins"], ["plugins", "--json"]):
        result = agent_host(*command, cwd=tmp_path, PYTHONPATH=site)
        assert (result.returncode, result.stderr) == (0, ""), command


def test_check_exits_0_when_no_plugin_failed(tmp_path: Path, site: str):
    (tmp_path / "agent-host.toml").unlink()
    result = agent_host("plugins", "--check", "--json", cwd=tmp_path, PYTHONPATH=site)
    assert (result.returncode, result.stderr) == (0, "")
    assert {row["state"] for row in json.loads(result.stdout)} <= {"active", "inactive"}


@pytest.mark.parametrize("command", [["run", "hi"], ["chat"]])
def test_run_and_chat_warn_of_a_failed_plugin_at_the_start(tmp_path, site, command):
    result = agent_host(*command, cwd=tmp_path, stdin="hi\n", PYTHONPATH=site)
    assert result.returncode == 0
    assert "scripted reply: hi\n" in result.stdout
    assert result.stderr == f"agent-host: warning: {FAILURE}\n{SCRIPTED_NOTICE}\n"


def test_dev_warns_of_a_failed_plugin_before_it_watches(tmp_path: Path, site: str):
    result = agent_host("dev", cwd=tmp_path, stdin="/exit\n", PYTHONPATH=site)
    assert result.returncode == 0
    lines = result.stderr.splitlines()
    assert lines[:2] == [f"agent-host: warning: {FAILURE}", SCRIPTED_NOTICE]
    assert lines[2].startswith("agent-host: watching ")


def test_demo_warns_of_a_failed_plugin_and_runs(tmp_path: Path, site: str):
    result = agent_host("demo", cwd=tmp_path, PYTHONPATH=site)
    assert (result.returncode, result.stderr) == (0, f"agent-host: warning: {FAILURE}\n")
    assert result.stdout.startswith("agent-host demo — sessions in ")
