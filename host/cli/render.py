"""Plain-text tables and JSON for the command line (no terminal library on the start-up path)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


def to_json(rows: Sequence[dict[str, Any]]) -> str:
    """A top-level JSON array of objects with snake_case keys, one object per line.

    Not indented: ``indent`` makes ``json`` use its pure-Python encoder, which costs more than
    the rest of listing a few hundred plugins; one line per row stays readable and diffable.
    """
    if not rows:
        return "[]"
    return "[\n" + ",\n".join(json.dumps(row, ensure_ascii=False) for row in rows) + "\n]"


def to_json_document(value: Any) -> str:
    """One JSON document (a whole session, say), indented for reading."""
    return json.dumps(value, indent=2, ensure_ascii=False)


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A left-aligned text table with a header rule; cells are shown as given."""
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=True)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), rule, *(line(r) for r in rows)])


def plugin_table(rows: Sequence[dict[str, Any]]) -> str:
    """The human view of ``agent-host plugins``: one line per plugin, the services it
    provides and requires, why it is not active."""
    body = []
    for row in rows:
        origin = "built-in" if row["builtin"] else f"{row['distribution']} {row['version'] or ''}"
        detail = row["error"] or ""
        if row["missing"]:
            detail = "missing services: " + ", ".join(row["missing"])
        elif row["state"] == "active" and row["tools"]:
            detail = "tools: " + ", ".join(row["tools"])
        provides, requires = ", ".join(row["services"]), ", ".join(row["requires"])
        body.append([row["name"], row["state"], origin.strip(), provides, requires, detail])
    return table(["plugin", "state", "from", "provides", "requires", "detail"], body)


def unavailable_plugins(rows: Sequence[dict[str, Any]]) -> list[str]:
    """One line for each plugin that failed or is inactive for want of a service, in order:
    what a command that runs agents warns of at its start."""
    return [problem(row) for row in rows if row["state"] == "failed" or row["missing"]]


def problem(row: dict[str, Any]) -> str:
    """Why the plugin of a row that is not active is not: ``plugin NAME failed: ERROR``,
    ``plugin NAME inactive: missing services: A, B``, ``plugin NAME blocked: REASON``."""
    name, state = row["name"], row["state"]
    if row["missing"]:
        return f"plugin {name} {state}: missing services: " + ", ".join(row["missing"])
    return f"plugin {name} {state}: {row['error']}" if row["error"] else f"plugin {name} {state}"


def tool_table(rows: Sequence[dict[str, Any]]) -> str:
    """The human view of ``agent-host tools``: name, plugin, first line of the description."""
    body = [
        [row["name"], row["plugin"], (row["description"].splitlines() or [""])[0][:70]]
        for row in rows
    ]
    if not body:
        return "(no tools)"
    return table(["tool", "plugin", "description"], body)
