"""Throwaway plugin distributions made as real installed metadata for the tests.

A distribution is a module plus a ``*.dist-info`` directory (METADATA, entry_points.txt) in a
site directory: exactly what ``importlib.metadata`` reads.
"""

from __future__ import annotations

import textwrap
from pathlib import Path


def write_distribution(
    site: Path,
    name: str,
    *,
    version: str = "1.0",
    entry_points: dict[str, str],
    modules: dict[str, str],
    group: str = "agent_host.plugins",
) -> None:
    """Write ``modules`` (name → source) and the dist-info of ``name`` into ``site``.

    Without ``entry_points`` the distribution has no ``entry_points.txt``, as most don't.
    """
    site.mkdir(parents=True, exist_ok=True)
    for module, source in modules.items():
        (site / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
    )
    if entry_points:
        lines = [f"[{group}]"] + [f"{ep} = {target}" for ep, target in entry_points.items()]
        (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (info / "RECORD").write_text("", encoding="utf-8")
