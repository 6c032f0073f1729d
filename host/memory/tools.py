"""Giving an agent its memory: three tools confined to one directory, and a prompt section.

``install`` puts ``memory_list``, ``memory_read`` and ``memory_write`` into the agent's own
tool scope (so no tool filter removes them) and adds the ``subagent/memory`` prompt section:
how to keep a memory (one memory per file, ``MEMORY.md`` a one-line-per-entry index of which
only the first 200 lines are shown) followed by the head of ``MEMORY.md`` as it is when the
agent is built. A refused path is an error result for the model; nothing is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from host.agents.prompt import PromptSection, register_section
from host.disposal import Disposer, dispose_all
from host.memory.store import (
    INDEX_LINES,
    IndexHead,
    MemoryDirectory,
    Refused,
    repository_links,
)
from host.tools.tool import Tool, ToolExec, ToolResult, tool

if TYPE_CHECKING:
    from host.agents.registry import AgentSetup

SECTION = "subagent/memory"
LIST_MAX = 500
OWNER = "memory"

GUIDANCE = """\
# Your memory

You have a persistent memory directory, {where}. Every later agent started from your \
profile begins with what you keep there, so keep what will help it next time:
- the user: who they are, what they want, how they like to work;
- feedback: corrections and confirmations of how to approach this kind of task;
- the project: decisions, conventions and facts that the files themselves do not show;
- references: where to find things (documents, dashboards, commands).
Do not keep what only this task needs, what the code or its history already says, or secrets.

How to keep it:
- One memory per file: a short Markdown file with a descriptive name \
(`feedback-test-style.md`) stating the fact and why it matters.
- MEMORY.md is the index, one line per memory: `- [Title](file.md): one-line summary`. It \
holds no memory itself.
- Only the first {lines} lines of MEMORY.md are shown to a new agent: keep it short; merge \
or drop stale lines.
- Before adding a memory, look for one to update instead; correct a memory that proves \
wrong, or delete it (write it with empty content) and remove its index line.
- Tools: memory_list, memory_read(path), memory_write(path, content); paths are relative \
to the memory directory and cannot leave it.

MEMORY.md as it is now:
{index}"""

SCOPES = {
    "user": "kept for this user across every project",
    "project": "kept in the project and shared with everyone who works on it",
    "local": "kept in this copy of the project only",
}
EMPTY = "(MEMORY.md is empty: you have no memories yet.)"
CUT = "(MEMORY.md goes on: only its first {lines} lines are shown. Shorten it.)"


def section_text(scope: str, head: IndexHead | str) -> str:
    """The prompt section for a memory of ``scope`` whose index starts with ``head`` (a
    string: why the index could not be read)."""
    if isinstance(head, str):
        index = f"(MEMORY.md could not be read: {head})"
    elif not head.lines:
        index = CUT.format(lines=INDEX_LINES) if head.truncated else EMPTY
    else:
        index = "\n".join(head.lines)
        if head.truncated:
            index += "\n" + CUT.format(lines=INDEX_LINES)
    return GUIDANCE.format(where=SCOPES.get(scope, scope), lines=INDEX_LINES, index=index)


@attrs.frozen
class ListArgs:
    """``memory_list`` takes no arguments."""


@attrs.frozen
class ReadArgs:
    """Arguments of ``memory_read``."""

    path: str = attrs.field(
        metadata={"description": "The memory file, relative to the memory directory."}
    )


@attrs.frozen
class WriteArgs:
    """Arguments of ``memory_write``."""

    path: str = attrs.field(
        metadata={"description": "The memory file, relative to the memory directory."}
    )
    content: str = attrs.field(
        metadata={"description": "The file's whole new content; empty deletes the file."}
    )


def memory_tools(memory: MemoryDirectory) -> list[Tool]:
    """The three memory tools, confined to ``memory``."""

    @tool("memory_list", "List the files in your memory directory, with their sizes.", ListArgs)
    async def memory_list(args: ListArgs, exec: ToolExec) -> ToolResult:
        files = memory.listing()
        if not files:
            return ToolResult("(no memory files yet)", structured={"files": []})
        shown = files[:LIST_MAX]
        lines = [f"{name} ({size} bytes)" for name, size in shown]
        if len(files) > LIST_MAX:
            lines.append(f"(and {len(files) - LIST_MAX} more files not listed)")
        rows = [{"path": name, "bytes": size} for name, size in shown]
        return ToolResult("\n".join(lines), structured={"files": rows, "total": len(files)})

    @tool("memory_read", "Read one file of your memory directory.", ReadArgs)
    async def memory_read(args: ReadArgs, exec: ToolExec) -> ToolResult:
        try:
            return ToolResult(memory.read(args.path))
        except Refused as refusal:
            return ToolResult.error(f"memory_read: {refusal}")

    @tool(
        "memory_write",
        "Write one file of your memory directory (replacing it; empty content deletes it).",
        WriteArgs,
    )
    async def memory_write(args: WriteArgs, exec: ToolExec) -> ToolResult:
        try:
            return ToolResult(memory.write(args.path, args.content))
        except Refused as refusal:
            return ToolResult.error(f"memory_write: {refusal}")

    return [memory_list, memory_read, memory_write]


def install(setup: AgentSetup, directory: Path, scope: str) -> Disposer:
    """Give the agent being set up the memory in ``directory``: its tools and its section."""
    memory = MemoryDirectory(directory, repository_links(directory, scope))
    try:
        head: IndexHead | str = memory.index_head()
    except Refused as refusal:
        head = str(refusal)
    disposers: list[Disposer] = []
    try:
        for made in memory_tools(memory):
            disposers.append(setup.tools.register(made.name, made, owner=OWNER))
        section = PromptSection(SECTION, section_text(scope, head))
        disposers.append(register_section(setup.sections, section, owner=OWNER))
    except BaseException:
        dispose_all(disposers, f"undoing the memory of {setup.id} failed")
        raise
    return lambda: dispose_all(disposers, f"removing the memory of {setup.id} failed")
