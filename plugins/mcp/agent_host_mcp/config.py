"""MCP server definitions from ``[plugins.mcp.servers.<name>]`` and the project's ``.mcp.json``.

Stdlib, attrs and the host only: this runs at plugin load, before (and without) the MCP SDK.

``load_servers`` reads both sources and returns every valid definition as a ``ServerSpec``
(agent-host.toml first, then .mcp.json, each in written order), one ``ServerProblem`` line per
server whose definition is bad (the glue gives that server a ``failed`` row of its own), and
warning lines. Decisions:

- A name that is not 1-32 of ``[A-Za-z0-9_-]`` cannot be a row (``mcp.<name>``), so it is a
  warning and the server is skipped.
- A name in both sources: agent-host.toml wins, with a warning, even if its definition is bad.
- A ``.mcp.json`` that cannot be read, is not JSON or has no ``mcpServers`` object is one
  problem with ``name=None`` naming the file; no server from it loads. It is read as
  ``host.project_files`` reads a project's files: a regular file (a link to one is followed)
  of at most ``MCP_JSON_BYTES``; a device, FIFO or socket is never read.
- ``${VAR}`` and ``${VAR:-default}`` (default also when VAR is empty) expand from the
  environment in ``command``, ``args``, ``env``, ``cwd``, ``url`` and, in .mcp.json, header
  values (as Claude Code does); an unset VAR without a default is the server's problem.
  In agent-host.toml a header value is the *name* of an environment variable holding it.
- Unknown keys are problems in both sources; .mcp.json accepts Claude Code's keys (``type``,
  ``command``, ``args``, ``env``, ``url``, ``headers``), agent-host.toml adds ``cwd``, ``allow``,
  ``deny``, ``startup_timeout`` and ``call_timeout``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import attrs

from host.api import FileRefused, read_regular

TOML_SOURCE = "agent-host.toml"
JSON_SOURCE = ".mcp.json"
SERVER_NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")
DEFAULT_STARTUP_TIMEOUT = 30.0
DEFAULT_CALL_TIMEOUT = 300.0
MCP_JSON_BYTES = 1024 * 1024
"""The largest ``.mcp.json`` read; a larger one (or one that is no regular file) is refused."""

Transport = Literal["stdio", "http"]

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PLAIN = re.compile(r"[A-Za-z0-9_.-]{1,40}")
_STDIO_KEYS = frozenset({"command", "args", "env", "cwd"})
_HTTP_KEYS = frozenset({"url", "headers"})
_TOML_KEYS = _STDIO_KEYS | _HTTP_KEYS | {"allow", "deny", "startup_timeout", "call_timeout"}
_JSON_KEYS = frozenset({"type", "command", "args", "env", "url", "headers"})
_JSON_TYPES: dict[str, Transport] = {"stdio": "stdio", "http": "http", "streamable-http": "http"}


@attrs.frozen
class ServerSpec:
    """One valid MCP server definition, values expanded from the environment."""

    name: str
    transport: Transport
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = attrs.field(factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = attrs.field(factory=dict)
    allow: tuple[str, ...] | None = None
    deny: tuple[str, ...] = ()
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    source: str = TOML_SOURCE
    project: bool = False
    written: ServerSpec | None = attrs.field(default=None, repr=False)
    """This definition as written in its file: ``${VAR}`` unexpanded, and in agent-host.toml
    each header value the name of the variable holding it. None: built in code, as written."""

    def as_written(self) -> ServerSpec:
        """The definition as written in its file (see ``written``)."""
        return self.written or self

    @property
    def headers_name_variables(self) -> bool:
        """Whether each header value is a variable's name (agent-host.toml), not a template."""
        return self.source != JSON_SOURCE

    def variables(self) -> list[str]:
        """The environment variables whose values the definition hands to the server: every
        ``${VAR}`` as written (and agent-host.toml's header variables), once, in written order."""
        written = self.as_written()
        texts = [written.command, *written.args, *written.env.values(), written.cwd, written.url]
        if not self.headers_name_variables:
            texts += written.headers.values()
        names = [match.group(1) for text in texts if text for match in _VARIABLE.finditer(text)]
        if self.headers_name_variables:
            names += written.headers.values()
        return list(dict.fromkeys(names))

    def fingerprint(self) -> str:
        """sha256 hex of the definition as written: any change to what runs changes it."""
        import hashlib  # here, not at plugin load: only trust decisions need it

        written = self.as_written()
        # the source too: header values mean different things in the two files
        definition = {
            "transport": written.transport, "command": written.command,
            "args": list(written.args), "env": written.env, "cwd": written.cwd,
            "url": written.url, "headers": written.headers, "source": written.source,
        }  # fmt: skip
        text = json.dumps(definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def allows(self, tool_name: str) -> bool:
        """Whether the server's tool ``tool_name`` (its MCP name) passes ``allow`` and ``deny``:
        tool globs (``host.tools.globs``), matching that name or the server's plugin
        ``mcp.<name>``: the host's tool filter over them (``ToolFilter``)."""
        from host.api import ToolFilter

        return ToolFilter(self.allow, self.deny).admits(tool_name, f"mcp.{self.name}")


@attrs.frozen
class ServerProblem:
    """A bad definition: ``message`` is the whole line; ``name`` None means a whole file."""

    name: str | None
    message: str


@attrs.define
class Servers:
    """What ``load_servers`` found."""

    specs: list[ServerSpec] = attrs.field(factory=list)
    problems: list[ServerProblem] = attrs.field(factory=list)
    warnings: list[str] = attrs.field(factory=list)


class _Bad(Exception):
    """A server definition's problem (the message without the ``MCP server "x": `` prefix)."""


def load_servers(
    table: Mapping[str, Any],
    mcp_json: Path | None,
    environ: Mapping[str, str],
    *,
    toml_project: bool,
    mcp_json_project: bool,
) -> Servers:
    """Read ``[plugins.mcp.servers]`` (``table``) and ``mcp_json`` (if it exists).

    ``toml_project`` / ``mcp_json_project``: whether that source is defined by the project
    (its servers need trust, ``ServerSpec.project``) rather than by the user.
    """
    found = Servers()
    for name, raw in table.items():
        _add(found, name, raw, TOML_SOURCE, toml_project, environ)
    for name, raw in _read_mcp_json(mcp_json, found).items():
        if name in table:
            found.warnings.append(
                f"MCP server {_shown(name)} is defined in both {TOML_SOURCE} and {JSON_SOURCE}; "
                f"{TOML_SOURCE} wins"
            )
        else:
            _add(found, name, raw, JSON_SOURCE, mcp_json_project, environ)
    return found


def _add(
    found: Servers, name: str, raw: Any, source: str, project: bool, environ: Mapping[str, str]
) -> None:
    if not SERVER_NAME.fullmatch(name):
        found.warnings.append(
            f"MCP server name {_shown(name)} in {source} is not 1-32 of [A-Za-z0-9_-]; skipped"
        )
        return
    try:
        found.specs.append(_spec(name, raw, source, project, environ))
    except _Bad as bad:
        found.problems.append(ServerProblem(name, f'MCP server "{name}": {bad}'))


def _read_mcp_json(path: Path | None, found: Servers) -> Mapping[str, Any]:
    """The ``mcpServers`` object of ``path``; {} if there is none or the file is bad."""
    try:
        raw = None if path is None else read_regular(path, MCP_JSON_BYTES)
    except FileRefused as exc:
        found.problems.append(ServerProblem(None, f"{exc}; no MCP server from it loads"))
        return {}
    if raw is None:
        return {}
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        message = f"cannot read it: {exc}"
    except json.JSONDecodeError as exc:
        message = f"not valid JSON: {exc.msg} (line {exc.lineno} column {exc.colno})"
    else:
        servers = data.get("mcpServers") if isinstance(data, dict) else None
        if isinstance(servers, dict):
            return servers
        message = 'expected {"mcpServers": {"<name>": {...}}}'
    found.problems.append(ServerProblem(None, f"{path}: {message}; no MCP server from it loads"))
    return {}


def _spec(
    name: str, raw: Any, source: str, project: bool, environ: Mapping[str, str]
) -> ServerSpec:
    """Check and expand one definition; raises ``_Bad`` with its first problem."""
    is_json = source == JSON_SOURCE
    if not isinstance(raw, dict):
        raise _Bad("must be an object" if is_json else "must be a table")
    known = _JSON_KEYS if is_json else _TOML_KEYS
    for key in raw:
        if key not in known:
            raise _Bad(f"unknown key {_shown(key)}")
    transport = _transport(raw, is_json)
    other = _HTTP_KEYS if transport == "stdio" else _STDIO_KEYS
    for key in raw:
        if key in other:
            raise _Bad(f"{key}: only for {'http' if transport == 'stdio' else 'stdio'} servers")
    needed = "command" if transport == "stdio" else "url"
    if needed not in raw:
        raise _Bad(f"{needed}: required for {transport} servers")

    command = _optional_string(raw, "command")
    args = _strings(raw, "args") or ()
    env = _string_map(raw, "env")
    cwd = _optional_string(raw, "cwd")
    url = _optional_string(raw, "url")
    headers = _string_map(raw, "headers")
    allow = _strings(raw, "allow")
    deny = _strings(raw, "deny") or ()
    startup_timeout = _timeout(raw, "startup_timeout", DEFAULT_STARTUP_TIMEOUT)
    call_timeout = _timeout(raw, "call_timeout", DEFAULT_CALL_TIMEOUT)

    expanded_url = None if url is None else _expand("url", url, environ)
    if expanded_url is not None:
        parts = urlsplit(expanded_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise _Bad("url: must be an http:// or https:// URL")
    return ServerSpec(
        name=name,
        transport=transport,
        command=None if command is None else _expand("command", command, environ),
        args=tuple(_expand(f"args[{i}]", arg, environ) for i, arg in enumerate(args)),
        env={key: _expand(f"env.{_shown_key(key)}", v, environ) for key, v in env.items()},
        cwd=None if cwd is None else _expand("cwd", cwd, environ),
        url=expanded_url,
        headers={
            key: (_expand if is_json else _header_variable)(
                f"headers.{_shown_key(key)}", value, environ
            )
            for key, value in headers.items()
        },
        allow=allow,
        deny=deny,
        startup_timeout=startup_timeout,
        call_timeout=call_timeout,
        source=source,
        project=project,
        written=ServerSpec(name, transport, command, args, env, cwd, url, headers, source=source),
    )


def _transport(raw: dict[str, Any], is_json: bool) -> Transport:
    """stdio or http: .mcp.json's ``type`` if given, else whichever of command/url is there."""
    if is_json and "type" in raw:
        kind = raw["type"]
        if kind == "sse":
            raise _Bad('transport "sse" is not supported')
        if not isinstance(kind, str) or kind not in _JSON_TYPES:
            raise _Bad('type: must be "stdio", "http" or "streamable-http"')
        return _JSON_TYPES[kind]
    if "command" in raw and "url" in raw:
        raise _Bad("give either command (stdio) or url (http), not both")
    if "command" in raw:
        return "stdio"
    if "url" in raw:
        return "http"
    raise _Bad("needs command (stdio) or url (http)")


def _optional_string(raw: dict[str, Any], key: str) -> str | None:
    if key not in raw:
        return None
    value = raw[key]
    if not isinstance(value, str) or not value:
        raise _Bad(f"{key}: must be a non-empty string")
    return value


def _strings(raw: dict[str, Any], key: str) -> tuple[str, ...] | None:
    if key not in raw:
        return None
    value = raw[key]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _Bad(f"{key}: must be a list of strings")
    return tuple(value)


def _string_map(raw: dict[str, Any], key: str) -> dict[str, str]:
    value = raw.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _Bad(f"{key}: must map names to strings")
    return dict(value)


def _timeout(raw: dict[str, Any], key: str, default: float) -> float:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1e9:
        raise _Bad(f"{key}: must be a positive number of seconds")
    return float(value)


def _expand(where: str, text: str, environ: Mapping[str, str]) -> str:
    """``text`` with ``${VAR}`` and ``${VAR:-default}`` replaced from ``environ``."""

    def value(match: re.Match[str]) -> str:
        variable, default = match.group(1), match.group(2)
        found = environ.get(variable)
        if default is not None:
            return found or default
        if found is None:
            raise _Bad(f"{where}: ${{{variable}}} is not set")
        return found

    return _VARIABLE.sub(value, text)


def _header_variable(where: str, variable: str, environ: Mapping[str, str]) -> str:
    """An agent-host.toml header: its value names the environment variable holding it."""
    if not _ENV_NAME.fullmatch(variable):
        raise _Bad(
            f"{where}: {_shown(variable)} is not an environment variable name "
            "(header values name the variable holding them)"
        )
    found = environ.get(variable)
    if found is None:
        raise _Bad(f"{where}: environment variable {variable} is not set")
    return found


def _shown(text: str) -> str:
    """``text`` quoted on one line, cut to 40 characters."""
    cut = text if len(text) <= 40 else text[:39] + "…"
    return json.dumps(cut, ensure_ascii=False)


def _shown_key(key: str) -> str:
    """A key for a ``where`` path: as is when plain, else quoted."""
    return key if _PLAIN.fullmatch(key) else _shown(key)
