"""Claude Code agent files (``.claude/agents/*.md``) read as profiles, as they are written.

Their front matter is YAML, read with PyYAML's ``safe_load``, so anything valid in Claude
Code's format reads: quoted strings, multi-line descriptions, ``tools`` as a comma-separated
string or a list. Claude Code also accepts a plain
value holding ``: `` (``description: Use it when: …``), which YAML does not: a block that fails
is read once more with such values quoted (``host.profiles.frontmatter.quote_plain_values``,
as our own files are). The keys read are mapped onto a profile's fields and checked as in our
own files (``host.profiles.parsing.build``):

* ``name``, ``description``: required; line breaks in a description become spaces, and one
  longer than 1024 characters is cut (with a note);
* ``tools`` → ``tools`` and ``disallowedTools`` → ``disallowed_tools``: mapped by ``TOOLS``
  and, while the workspace plugin offers them, ``WORKSPACE_TOOLS`` (below); a denied name
  without an equivalent denies nothing the host has;
* ``model``: ``sonnet``, ``opus``, ``haiku`` and ``inherit`` mean the default model; another
  value names a host model;
* ``maxTurns`` → ``max_steps``, ``background``, ``memory`` (our memory directories,
  ``host.profiles.memory``);
* ``mcpServers`` → ``mcp_servers``: server names; an inline definition (a mapping) is
  reported, since a child never starts servers.

Other keys (``color``, ``permissionMode``, ``hooks``, ``skills``, …) are ignored. Tool names:
``TOOLS`` maps those the host has an equivalent for; ``mcp__<server>__<tool>`` is the host's
``<server>__<tool>`` and ``mcp__<server>`` (every tool of the server) its plugin
``mcp.<server>``; ``Tool(args)`` counts as ``Tool``. The names without an equivalent are
one diagnostic for the file, and the profile loads without them (never silently dropped).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import yaml

from host.profiles.frontmatter import FrontMatterError, quote_plain_values, split_raw
from host.profiles.model import Diagnostic, Profile, Source
from host.profiles.parsing import DESCRIPTION_MAX, Invalid, build, split_tool_list

TOOLS = {
    "AskUserQuestion": "ask_user",
    "Agent": "subagent",
    "Task": "subagent",
    "SendMessage": "send_message",
}
"""Claude Code tool names with a host equivalent (the delegation tool by its default name)."""

WORKSPACE_TOOLS = {
    "Read": "read_file",
    "Grep": "grep",
    "Glob": "list_files",
    "Write": "write_file",
    "Edit": "edit_file",
    "Bash": "run_command",
}
"""Claude Code's file and shell tools and the workspace plugin's equivalents
(docs/workspace.md): mapped only while the host has the equivalent tool."""

MODEL_ALIASES = ("sonnet", "opus", "haiku", "inherit")
MCP_PREFIX = "mcp__"

KEYS = {
    "name": "name",
    "description": "description",
    "tools": "tools",
    "disallowedTools": "disallowed_tools",
    "model": "model",
    "maxTurns": "max_steps",
    "background": "background",
    "mcpServers": "mcp_servers",
    "memory": "memory",
}
"""Claude Code's front-matter keys and the profile fields they become."""
_CLAUDE_KEY = {ours: theirs for theirs, ours in KEYS.items()}


def parse_claude(
    text: str, *, path: str, source: Source, tools: Collection[str] = ()
) -> tuple[Profile | None, list[Diagnostic]]:
    """The profile a Claude Code agent file defines (None if it cannot be read) and the
    diagnostics about it (one line each, naming the file); ``tools`` are the names of the
    host's global tools (``WORKSPACE_TOOLS`` are mapped only to those)."""
    try:
        block, body = split_raw(text)
        data = _load_yaml(block)
        fields, notes = _fields(data, tools)
        profile = build(fields, body, path=path, source=source, plugin=None)
    except FrontMatterError as error:
        return None, [Diagnostic(path, error.problem, field=error.field, source=source)]
    except Invalid as error:
        field = _CLAUDE_KEY.get(error.field, error.field) if error.field else None
        return None, [Diagnostic(path, error.problem, field=field, source=source)]
    diagnostics = [
        Diagnostic(
            path, f'profile "{profile.name}": {note}', field=key, source=source, skipped=False
        )
        for key, note in notes
    ]
    return profile, diagnostics


def _load_yaml(block: list[str]) -> dict[str, Any]:
    """The front matter as a mapping; ``Invalid`` (one line) when it is not valid YAML, even
    with its plain values quoted (``quote_plain_values``), as Claude Code reads them."""
    try:
        data = yaml.safe_load("\n".join(block))
    except yaml.YAMLError as error:
        data = _load_quoted(block, error)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise Invalid("the front matter must be a mapping of keys to values")
    return data


def _load_quoted(block: list[str], error: Exception) -> Any:
    """``block`` read again with its plain values quoted; ``Invalid`` with the first
    ``error`` when that does not help."""
    repaired = quote_plain_values(block)
    if repaired != block:
        try:
            return yaml.safe_load("\n".join(repaired))
        except yaml.YAMLError:
            pass
    raise Invalid(f"invalid YAML: {_one_line(error)}")


def _one_line(error: Exception) -> str:
    """A YAML error as one line: the problem and the file line it is on."""
    problem = getattr(error, "problem", None) or getattr(error, "context", None)
    mark = getattr(error, "problem_mark", None)
    if problem is None:
        return " ".join(str(error).split())
    return f"{problem} (line {mark.line + 2})" if mark is not None else str(problem)


def _fields(
    data: dict[str, Any], tools: Collection[str]
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The profile fields of Claude Code's keys, and notes ``(key, text)`` on what the host
    cannot give a child (the profile still loads)."""
    fields = {ours: data[theirs] for theirs, ours in KEYS.items() if data.get(theirs) is not None}
    notes: list[tuple[str, str]] = []
    for field in ("tools", "disallowed_tools"):
        if field in fields:
            fields[field], lacking = map_tools(fields[field], field, tools)
            if lacking and field == "tools":
                names = ", ".join(lacking)
                notes.append(("tools", f"no host tool for {names}; its children go without"))
    description = fields.get("description")
    if isinstance(description, str) and len(" ".join(description.split())) > DESCRIPTION_MAX:
        fields["description"] = shorten(description)
        notes.append(("description", f"cut to {DESCRIPTION_MAX} characters"))
    model = fields.get("model")
    if isinstance(model, str) and model.strip().lower() in MODEL_ALIASES:
        fields["model"] = "inherit"
    servers = fields.get("mcp_servers")
    if isinstance(servers, list):
        inline = [item for item in servers if isinstance(item, dict)]
        fields["mcp_servers"] = [item for item in servers if not isinstance(item, dict)]
        if inline:
            names = ", ".join(str(name) for item in inline for name in item)
            note = f"inline MCP server definitions are not started: {names}"
            notes.append(("mcpServers", note))
    return fields, notes


def shorten(description: str) -> str:
    """A description longer than ``DESCRIPTION_MAX`` (Claude Code's may carry examples), cut
    at a word with ``…`` (whitespace runs collapsed, as in every description)."""
    text = " ".join(description.split())
    cut = text[: DESCRIPTION_MAX - 1].rsplit(" ", 1)[0]
    return cut + "…"


def map_tools(value: Any, field: str, tools: Collection[str] = ()) -> tuple[list[str], list[str]]:
    """Claude Code tool names (a comma-separated string or a list) as host tool names, and
    the names without an equivalent, in order (``tools``: the host's global tools)."""
    if isinstance(value, str):
        items = split_tool_list(value)
    elif isinstance(value, list) and all(isinstance(item, str) for item in value):
        items = value
    else:
        raise Invalid("must be a list of tool names or one comma-separated string", field)
    mapped: list[str] = []
    lacking: list[str] = []
    for item in items:
        name = item.strip().split("(", 1)[0].strip()
        host = host_tool(name, tools)
        if host is not None:
            mapped.append(host)
        elif name not in lacking:
            lacking.append(name)
    return mapped, lacking


def host_tool(name: str, tools: Collection[str] = ()) -> str | None:
    """The host's tool for Claude Code's ``name``, or None when it has no equivalent (a
    workspace tool counts only when it is among ``tools``, the host's global tools)."""
    if name in WORKSPACE_TOOLS:
        return WORKSPACE_TOOLS[name] if WORKSPACE_TOOLS[name] in tools else None
    if name == "*":
        return name
    if name.startswith(MCP_PREFIX):
        server, separator, tool = name[len(MCP_PREFIX) :].partition("__")
        if server and not separator:
            return f"mcp.{server}"  # the server's plugin: a glob matching all of its tools
        return f"{server}__{tool}" if server and tool else None
    return TOOLS.get(name)
