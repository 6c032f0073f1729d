"""``agent-host demo``: the end-to-end scenario, pinned line for line (ids aside)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.cli.support import closed_port_url

AGENT_HOST = str(Path(sys.executable).parent / "agent-host")
EXPECTED = Path(__file__).with_name("demo_expected.txt")


def run(*args: str, cwd: Path, **variables: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_HOST_")}
    env["NO_COLOR"] = "1"
    env.update(variables)
    return subprocess.run(
        [AGENT_HOST, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120
    )


def normalize(text: str) -> str:
    """Replace random ids by stable names in order of first appearance."""
    names: dict[str, str] = {}
    text = re.sub(
        r"sub_[0-9a-f]{32}", lambda m: names.setdefault(m[0], f"<child{len(names) + 1}>"), text
    )
    text = re.sub(r"msg_[0-9a-f]{32}", "<message>", text)
    text = re.sub(r"coordinator-[0-9a-f]{12}", "<root>", text)
    return re.sub(r"sessions in \S+", "sessions in <dir>", text)


def test_demo_output_is_pinned(tmp_path):
    result = run("demo", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert normalize(result.stdout) == EXPECTED.read_text()
    assert list(tmp_path.iterdir()) == []  # a temporary data directory, removed afterwards


def test_demo_uses_the_scripted_model_whatever_is_configured(tmp_path):
    (tmp_path / "agent-host.toml").write_text('[plugins.models]\ndefault = "openai"\n')
    result = run("demo", cwd=tmp_path, OPENAI_BASE_URL=closed_port_url(), AGENT_HOST_MODEL="m1")
    assert (result.returncode, result.stderr) == (0, "")
    assert normalize(result.stdout) == EXPECTED.read_text()


def test_demo_asks_its_scripted_user_whatever_the_users_approval_policy(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "agent-host.toml").write_text('[approvals]\nmode = "deny"\ndeny = ["publish_*"]\n')
    result = run("demo", cwd=tmp_path, AGENT_HOST_HOME=str(home))
    assert (result.returncode, result.stderr) == (0, "")
    assert normalize(result.stdout) == EXPECTED.read_text()


def test_demo_keeps_its_sessions_in_a_given_data_dir(tmp_path):
    data_dir = tmp_path / "data"
    assert run("demo", "--data-dir", str(data_dir), cwd=tmp_path).returncode == 0
    listed = json.loads(
        run("--data-dir", str(data_dir), "sessions", "list", "--json", cwd=tmp_path).stdout
    )
    origins = sorted(row["origin"] or "root" for row in listed)
    assert origins == ["root"] + ["subagent"] * 7


def test_demo_refuses_in_one_line_without_its_plugins(tmp_path):
    result = run("--no-plugin", "list_agents", "demo", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == (
        "agent-host: error: the demo needs the first-party plugins active: list_agents (blocked)"
        " (pip install -r requirements-dev.txt)\n"
    )
