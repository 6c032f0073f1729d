"""A checkout whose ``importable/host`` is no link (made without symlink support) refuses to
build with one line naming the fix, instead of building a distribution without ``host``."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]


def test_a_checkout_without_the_host_link_refuses_to_build(tmp_path: Path) -> None:
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "host", tmp_path / "host", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "importable").mkdir()
    (tmp_path / "importable" / "host").write_text("../host")  # what git writes without symlinks

    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path / "out"), str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip

    assert built.returncode != 0
    assert (
        "agent-host-core: importable/host is not a link to host/ (a checkout without symlink "
        "support?): clone again with `git clone -c core.symlinks=true`"
    ) in built.stderr + built.stdout
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())
