"""Running the real ``agent-host`` console script in a subprocess, and a closed loopback port;
the environment pointing it at a ``FakeServer``, its output without timings, a root's log."""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from agent_host_openai.testing import ENV_VARS, FakeServer

from tests.support import free_port

AGENT_HOST = str(Path(sys.executable).parent / "agent-host")


MEMORY_CAP = 1 << 30
"""Address space for a capped CLI: plenty for the host, far less than an endless read takes."""


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def agent_host(
    *args: str, cwd: Path, stdin: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    """``agent-host --data-dir CWD/data ARGS`` in ``cwd``, without the caller's model settings
    (``AGENT_HOST_*``, ``OPENAI_*``) and with ``env`` added; colour off."""
    return _run(args, cwd, stdin, env, None)


def capped_agent_host(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``agent_host`` with at most ``MEMORY_CAP`` bytes of address space."""
    return _run(args, cwd, None, env, _capped)


def _run(
    args: tuple[str, ...],
    cwd: Path,
    stdin: str | None,
    env: dict[str, str],
    preexec: Callable[[], None] | None,
) -> subprocess.CompletedProcess[str]:
    environ = {
        k: v for k, v in os.environ.items() if not k.startswith("AGENT_HOST_") and k not in ENV_VARS
    }
    environ["NO_COLOR"] = "1"
    environ.update(env)
    return subprocess.run(
        [AGENT_HOST, "--data-dir", str(cwd / "data"), *args],
        capture_output=True,
        text=True,
        env=environ,
        cwd=cwd,
        input=stdin,
        timeout=120,
        preexec_fn=preexec,
    )


def closed_port_url() -> str:
    """A ``http://127.0.0.1:PORT/v1`` base URL on which nothing listens."""
    return f"http://127.0.0.1:{free_port()}/v1"


def configured(server: FakeServer) -> dict[str, str]:
    """The environment that makes ``agent-host`` use model ``m1`` of ``server``."""
    return {"OPENAI_BASE_URL": server.url, "AGENT_HOST_MODEL": "m1"}


def timeless(text: str) -> str:
    """``text`` with each ``(1.23 s)`` timing written ``(T s)``."""
    return re.sub(r"\(\d+\.\d\d s\)", "(T s)", text)


def root_log(cwd: Path) -> list[str]:
    """``sessions show`` of the only root session of ``agent_host`` in ``cwd``, by line."""
    listed = json.loads(agent_host("sessions", "list", "--json", cwd=cwd).stdout)
    (root,) = [row["id"] for row in listed if not row["origin"]]
    return agent_host("sessions", "show", root, cwd=cwd).stdout.splitlines()
