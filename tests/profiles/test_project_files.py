"""Profile and agent files a project holds that are no regular file of bounded size, through
the real ``agent-host profiles`` under a memory cap: one diagnostic each, never a blocked or
endless read, and the other profiles load; a link to a regular file is read."""

from __future__ import annotations

import json
import os
from pathlib import Path

from host.profiles.sources import MAX_FILE_BYTES
from tests.cli.support import capped_agent_host
from tests.profiles.support import write


def test_special_and_oversized_profile_files_are_diagnostics(tmp_path: Path) -> None:
    project = tmp_path / "project"
    ours, claude = project / ".agent-host" / "agents", project / ".claude" / "agents"
    write(ours, "good.md", "good")
    os.mkfifo(ours / "fifo.md")  # nobody writes: a blocking open waits forever
    (ours / "big.md").write_text("---\nname: big\ndescription: d\n---\n" + "x" * MAX_FILE_BYTES)
    claude.mkdir(parents=True)
    (claude / "zero.md").symlink_to("/dev/zero")
    (claude / "shared.md").symlink_to(write(tmp_path / "elsewhere", "shared.md", "shared"))
    result = capped_agent_host(
        "profiles", "--json", cwd=project, AGENT_HOST_HOME=str(tmp_path / "home"),
        HOME=str(tmp_path / "real-home"), AGENT_HOST_PLUGINS="subagent",
    )  # fmt: skip
    assert (result.returncode, result.stderr) == (0, "")
    rows = json.loads(result.stdout)
    assert [r["name"] for r in rows if r["kind"] == "profile"] == [
        "Explore", "general-purpose", "good", "shared",
    ]  # fmt: skip
    assert [(r["path"], r["problem"]) for r in rows if r["kind"] == "diagnostic"] == [
        (f"{ours}/big.md", f"larger than {MAX_FILE_BYTES} bytes"),
        (f"{ours}/fifo.md", "is a FIFO, not a regular file"),
        (f"{claude}/zero.md", "is a character device (a link to /dev/zero), not a regular file"),
    ]
