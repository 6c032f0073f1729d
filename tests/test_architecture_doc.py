"""docs/architecture.md names real files: every backticked repository path in it exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
TOPS = ("host/", "plugins/", "tool_subagent_control/", "tool_subagent_report/", "tests/", "docs/")
"""Where the repository's own paths start; any other backticked text is code, not a path."""


def named_paths(text: str) -> list[str]:
    """The backticked repository paths of ``text``, in order (``host/tools/`` or
    ``host/app.py``)."""
    return [code for code in re.findall(r"`([^`\s]+)`", text) if code.startswith(TOPS)]


def test_the_doc_names_files_and_directories() -> None:
    paths = named_paths(DOC.read_text(encoding="utf-8"))
    assert len(paths) > 40
    assert "host/agents/driver.py" in paths and "host/plugins/reload.py" in paths


def test_every_path_the_doc_names_exists() -> None:
    missing = [p for p in named_paths(DOC.read_text(encoding="utf-8")) if not (ROOT / p).exists()]
    assert missing == []


def test_a_path_that_is_gone_is_reported() -> None:
    text = "1. `host/agents/driver.py` — runs.\n2. `host/tools/gone.py` — was here."
    assert [p for p in named_paths(text) if not (ROOT / p).exists()] == ["host/tools/gone.py"]
