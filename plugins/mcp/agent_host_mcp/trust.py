"""Which project-defined MCP servers the user trusts to start (stdlib and attrs only).

A server defined by the project (its ``agent-host.toml`` or ``.mcp.json``) runs a command from a
repository the user may have just cloned, so it starts only once trusted. Decisions live in
``$AGENT_HOST_HOME/mcp-trust.json`` (else ``~/.agent-host/mcp-trust.json``)::

    {"version": 1, "projects": {"<resolved project dir>": {"<server>": "<fingerprint>"}}}

A decision holds for the definition's fingerprint only: editing the command, args, env, cwd,
url or headers needs trusting again. ``describe`` is what ``agent-host mcp trust`` shows of it:
every part as written, never a value expanded from the environment. Writes are atomic
(temporary file + ``os.replace``, mode 0600). A corrupt or unreadable store trusts nothing on
reads and is a one-line ``TrustStoreError`` on writes.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent_host_mcp.config import ServerSpec

HOME_ENV = "AGENT_HOST_HOME"
FILE_NAME = "mcp-trust.json"
_VERSION = 1
_FIX = "fix or delete the file"
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_.-]+")

Decisions = dict[str, dict[str, str]]
"""Project directory → server name → trusted fingerprint."""


def untrusted_reason(name: str) -> str:
    """The blocked row's error for the untrusted server ``name``."""
    return f'not trusted: run "agent-host mcp trust {name}"'


def default_trust_path(environ: Mapping[str, str]) -> Path:
    """``$AGENT_HOST_HOME/mcp-trust.json``, else ``~/.agent-host/mcp-trust.json`` (``HOME``)."""
    home = environ.get(HOME_ENV)
    if home:
        return Path(home) / FILE_NAME
    base = environ.get("HOME")
    return (Path(base) if base else Path.home()) / ".agent-host" / FILE_NAME


def describe(spec: ServerSpec) -> list[str]:
    """What trusting ``spec`` lets run or connect to, one line per part, as written in its
    file (``${VAR}`` unexpanded): command, args, cwd and each env entry, or url and each
    header; then one line per environment variable whose value the server is given."""
    written = spec.as_written()
    if written.url is not None:
        lines = [f"url: {_quoted(written.url)}"]
        lines += [f"header {_key_shown(key)}: {_header(written, value)}"
                  for key, value in written.headers.items()]  # fmt: skip
    else:
        lines = [f"command: {_quoted(written.command or '')}"]
        if written.args:
            lines.append(f"args: [{', '.join(_quoted(arg) for arg in written.args)}]")
        if written.cwd is not None:
            lines.append(f"cwd: {_quoted(written.cwd)}")
        lines += [f"env {_key_shown(key)}: {_quoted(value)}" for key, value in written.env.items()]
    return lines + [f"sends your ${name} to this server" for name in spec.variables()]


def _header(written: ServerSpec, value: str) -> str:
    if written.headers_name_variables:
        return f"the value of ${value}"
    return _quoted(value)


def _key_shown(key: str) -> str:
    return key if _PLAIN_KEY.fullmatch(key) else _quoted(key)


def _quoted(text: str) -> str:
    """``text`` as a JSON string with every unprintable character escaped, so that no control
    or bidirectional character can make the line look like something else."""
    shown = json.dumps(text, ensure_ascii=False)
    return "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in shown)


class TrustStoreError(Exception):
    """The store cannot be read or written; the message is one line naming the file."""


class TrustStore:
    """The user's trust decisions, read from ``path`` on every call."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def is_trusted(self, project_dir: Path, spec: ServerSpec) -> bool:
        """True for a user-defined server, or one trusted with this very definition."""
        if not spec.project:
            return True
        try:
            decisions = self._read()
        except TrustStoreError:
            return False
        return decisions.get(_key(project_dir), {}).get(spec.name) == spec.fingerprint()

    def trust(self, project_dir: Path, spec: ServerSpec) -> None:
        """Record that ``spec`` as defined now may start in ``project_dir``."""
        decisions = self._read()
        decisions.setdefault(_key(project_dir), {})[spec.name] = spec.fingerprint()
        self._write(decisions)

    def untrust(self, project_dir: Path, name: str) -> bool:
        """Forget the decision for server ``name`` in ``project_dir``; False if there was none."""
        decisions = self._read()
        servers = decisions.get(_key(project_dir), {})
        if servers.pop(name, None) is None:
            return False
        if not servers:
            del decisions[_key(project_dir)]
        self._write(decisions)
        return True

    def _read(self) -> Decisions:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as exc:
            raise self._error(f"cannot read it ({_reason(exc)})") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise self._error(f"not valid JSON ({exc.msg}, line {exc.lineno}); {_FIX}") from None
        decisions = _decisions(data)
        if decisions is None:
            raise self._error(f'expected {{"version": {_VERSION}, "projects": {{...}}}}; {_FIX}')
        return decisions

    def _write(self, decisions: Decisions) -> None:
        body = json.dumps({"version": _VERSION, "projects": decisions}, indent=2, sort_keys=True)
        tmp: str | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as file:  # mkstemp creates it 0600
                file.write(body + "\n")
                file.flush()
                os.fsync(file.fileno())
            os.replace(tmp, self.path)
        except OSError as exc:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            raise self._error(f"cannot write it ({_reason(exc)})") from None

    def _error(self, what: str) -> TrustStoreError:
        return TrustStoreError(f"MCP trust store {self.path}: {what}")


def _key(project_dir: Path) -> str:
    return str(Path(project_dir).resolve())


def _decisions(data: Any) -> Decisions | None:
    """The decisions in a parsed store, or None if it is not the expected shape."""
    if not isinstance(data, dict) or data.get("version") != _VERSION:
        return None
    projects = data.get("projects")
    if not isinstance(projects, dict):
        return None
    for servers in projects.values():
        if not isinstance(servers, dict) or not all(isinstance(v, str) for v in servers.values()):
            return None
    return projects


def _reason(exc: BaseException) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
