"""docs/tool-catalog.md is what ``agent-host tools --markdown`` prints today."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

AGENT_HOST = str(Path(sys.executable).parent / "agent-host")
DOC = Path(__file__).resolve().parents[2] / "docs" / "tool-catalog.md"
FIRST_PARTY = "subagent,subagent_control,list_agents,subagent_report,word_count,openai,workspace"


def tools(*args: str, cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_HOST_")}
    env["AGENT_HOST_PLUGINS"] = FIRST_PARTY  # other installed plugins must not change the doc
    env["AGENT_HOST_HOME"] = str(cwd / "home")  # nor the user's own profiles
    env["HOME"] = str(cwd / "real-home")  # nor Claude Code agent files of the machine's user
    result = subprocess.run(
        [AGENT_HOST, "tools", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_catalog_document_is_current(tmp_path):
    assert tools("--markdown", cwd=tmp_path) == DOC.read_text(), (
        "docs/tool-catalog.md is stale: regenerate it with "
        f"AGENT_HOST_PLUGINS={FIRST_PARTY} agent-host tools --markdown > docs/tool-catalog.md"
    )


def test_a_child_scope_adds_report_and_a_root_has_none(tmp_path):
    root = [row["name"] for row in json.loads(tools("--json", cwd=tmp_path))]
    child = [row["name"] for row in json.loads(tools("--scope", "child", "--json", cwd=tmp_path))]
    assert "report" not in root
    assert child == [*root, "report"]
