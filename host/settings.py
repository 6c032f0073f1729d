"""The host's settings: where it keeps its data and reads its configuration.

A module of its own, below the host that holds them (``host.app``) and the author API that types
``ctx.settings`` (``host.api``), so neither has to import the other for them.
"""

from __future__ import annotations

from pathlib import Path

import attrs

DEFAULT_DATA_DIR = ".agent-host"

DEFAULT_MAX_RESULT_CHARS = 100_000
"""``[tools] max_result_chars`` unless configured: a result's characters a model is given."""


@attrs.frozen
class HostSettings:
    """Where the host keeps its data and reads its configuration (the ``settings`` service).

    ``project_dir`` is the project the host runs in (the CLI's working directory; None for a
    host built in code), where project files such as ``.mcp.json`` live. ``config_trusted``
    says whether the configuration came from the user (``--config``, or code) rather than from
    the project's own ``agent-host.toml``, which a freshly cloned repository may carry.
    """

    data_dir: Path = Path(DEFAULT_DATA_DIR)
    config_path: Path | None = None
    debug: bool = False
    project_dir: Path | None = None
    config_trusted: bool = True
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS
    """``[tools] max_result_chars``: a tool result's characters a model is given (0: all)."""
    tools_used: bool = True
    """False for a command that calls no tool (``sessions``, ``models``, ``profiles``):
    plugins that start tool servers start none."""
