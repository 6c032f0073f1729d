"""``agent-host profiles [--json]``: every subagent profile in effect, and every diagnostic.

JSON: a top-level array; ``profile`` entries carry source, name, description, tools,
disallowed tools, model, max steps, background, MCP servers, memory scope and directory,
file, plugin, aliases, the profiles they override and ``default`` (true for the profile a
delegation without ``subagent_type`` starts from: ``general-purpose``, when it is in effect);
``diagnostic`` entries carry the file, field and problem, and ``skipped`` (false for a note on
a profile that loaded anyway, such as Claude Code tools the host lacks). Profiles are listed
as the host sees them (no delegation tool's deployment filter). The table says which profile
is the default in a line after it.
"""

from __future__ import annotations

import argparse
from typing import Any

from host.app import Host
from host.cli import render
from host.profiles.model import ProfileSet


def rows(profiles: ProfileSet) -> list[dict[str, Any]]:
    """The JSON rows: profiles in listing order, then diagnostics in reading order."""
    result: list[dict[str, Any]] = []
    default = profiles.default()
    for profile in profiles.profiles:
        overrides = [
            {"source": hidden.source, "path": hidden.path}
            for hidden in profiles.shadowed
            if hidden.name == profile.name
        ]
        result.append(
            {
                "kind": "profile",
                "name": profile.name,
                "source": profile.source,
                "description": profile.description,
                "tools": list(profile.tools) if profile.tools is not None else None,
                "disallowed_tools": list(profile.disallowed_tools),
                "model": profile.model,
                "max_steps": profile.max_steps,
                "background": profile.background,
                "mcp_servers": (
                    list(profile.mcp_servers) if profile.mcp_servers is not None else None
                ),
                "memory": profile.memory,
                "memory_dir": profile.memory_dir,
                "path": profile.path,
                "plugin": profile.plugin,
                "aliases": profiles.aliases_of(profile.name),
                "overrides": overrides,
                "default": profile is default,
            }
        )
    for diagnostic in profiles.diagnostics:
        result.append(
            {
                "kind": "diagnostic",
                "source": diagnostic.source,
                "path": diagnostic.path,
                "field": diagnostic.field,
                "problem": diagnostic.problem,
                "skipped": diagnostic.skipped,
                "message": str(diagnostic),
            }
        )
    return result


def table(entries: list[dict[str, Any]]) -> str:
    """The human view: one line per profile, then one line per diagnostic: ``warning:`` for
    a skipped file, ``note:`` for one that loaded anyway."""
    body = []
    for row in (r for r in entries if r["kind"] == "profile"):
        tools = "all" if row["tools"] is None else ", ".join(row["tools"]) or "none"
        if row["disallowed_tools"]:
            tools += " except " + ", ".join(row["disallowed_tools"])
        if row["mcp_servers"] is not None:
            tools += "; MCP servers: " + (", ".join(row["mcp_servers"]) or "none")
        if row["memory"] is not None:
            tools += f"; memory: {row['memory']}"
        body.append(
            [row["name"], row["source"], row["model"] or "default", tools, row["description"][:60]]
        )
    lines = [render.table(["profile", "source", "model", "tools", "description"], body)]
    default = next((r["name"] for r in entries if r["kind"] == "profile" and r["default"]), None)
    lines.append(
        f"default profile (no subagent_type): {default}"
        if default is not None
        else "default profile (no subagent_type): none, a plain subagent with the parent's tools"
    )
    lines += [
        f"{'warning' if r['skipped'] else 'note'}: {r['message']}"
        for r in entries
        if r["kind"] == "diagnostic"
    ]
    return "\n".join(lines)


def command(host: Host, args: argparse.Namespace) -> int:
    """Print the profiles (diagnostics do not change the exit code)."""
    entries = rows(host.profiles.load())
    print(render.to_json(entries) if args.json else table(entries))
    return 0
