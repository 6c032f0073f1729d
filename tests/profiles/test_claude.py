"""Claude Code agent files (``.claude/agents``) loaded as they are written."""

from __future__ import annotations

from pathlib import Path

import agent_host_workspace

from host.agents.scripted import say
from host.profiles.library import ProfileLibrary
from host.profiles.sources import EXPLORE
from host.tools.filter import ToolFilter
from tests.profiles.support import delegate, environ, profile_host, write
from tests.support import scripted

REVIEWER = """\
---
name: code-reviewer
description: Expert code review specialist. Proactively reviews code for quality, security, and maintainability. Use immediately after writing or modifying code.
tools: Read, Grep, Glob, Bash
model: inherit
---

You are a senior code reviewer ensuring high standards of code quality and security.

When invoked:
1. Run git diff to see recent changes
2. Focus on modified files
"""

DATA_SCIENTIST = """\
---
name: "data-scientist"
description: >
  Data analysis expert for SQL queries, BigQuery operations,
  and data insights. Use proactively for data analysis tasks.
tools:
  - Bash
  - Read
  - mcp__bigquery__query
  - mcp__bigquery__list_tables
model: sonnet
color: blue
---
You are a data scientist specializing in SQL and BigQuery analysis.
"""

COORDINATOR = """\
---
name: 'coordinator'
description: |
  Splits work among helpers.
  Asks the user when unsure.
tools: AskUserQuestion, Task(code-reviewer), SendMessage
disallowedTools: [Bash, WebFetch]
model: Opus
permissionMode: plan
maxTurns: 7
background: true
mcpServers:
  - github
  - local-db:
      command: ./db-server
skills: [review]
hooks:
  PreToolUse:
    - matcher: Bash
      hooks:
        - type: command
          command: ./check.sh
memory: user
---
You coordinate.
"""


def claude_library(tmp_path: Path) -> tuple[ProfileLibrary, Path, Path]:
    env = environ(tmp_path)
    project = tmp_path / "project"
    made = ProfileLibrary(environ=env, cwd=project)
    return made, Path(env["HOME"]) / ".claude" / "agents", project / ".claude" / "agents"


def put(directory: Path, file: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / file
    path.write_text(text, encoding="utf-8")
    return path


def test_real_claude_code_files_load_as_written(tmp_path):
    lib, claude_user, claude_project = claude_library(tmp_path)
    reviewer = put(claude_user, "code-reviewer.md", REVIEWER)
    data = put(claude_project, "data-scientist.md", DATA_SCIENTIST)
    coordinator = put(claude_project, "coordinator.md", COORDINATOR)
    loaded = lib.load()
    assert loaded.names() == [
        "code-reviewer",
        "coordinator",
        "data-scientist",
        "Explore",
        "general-purpose",
    ]

    review = loaded.get("code-reviewer")
    assert (review.source, review.tools, review.model) == ("claude-user", (), None)
    assert review.description.startswith("Expert code review specialist. Proactively")
    assert review.persona is not None and review.persona.startswith("You are a senior")
    assert review.persona.endswith("2. Focus on modified files")

    science = loaded.get("data-scientist")
    assert science.description == (
        "Data analysis expert for SQL queries, BigQuery operations, and data insights. "
        "Use proactively for data analysis tasks."
    )
    assert science.tools == ("bigquery__query", "bigquery__list_tables")
    assert (science.source, science.model) == ("claude-project", None)

    boss = loaded.get("coordinator")
    assert boss.description == "Splits work among helpers. Asks the user when unsure."
    assert boss.tools == ("ask_user", "subagent", "send_message")
    assert boss.disallowed_tools == ()  # the host has neither Bash nor WebFetch
    assert (boss.model, boss.max_steps, boss.background) == (None, 7, True)
    assert boss.mcp_servers == ("github",)
    assert boss.memory == "user"
    assert boss.memory_dir == str(tmp_path / "home" / "agent-memory" / "coordinator")

    assert [(str(d), d.skipped) for d in loaded.diagnostics] == [
        (
            f'{reviewer}: tools: profile "code-reviewer": no host tool for Read, Grep, Glob, '
            "Bash; its children go without",
            False,
        ),
        (
            f'{coordinator}: mcpServers: profile "coordinator": inline MCP server definitions '
            "are not started: local-db",
            False,
        ),
        (
            f'{data}: tools: profile "data-scientist": no host tool for Bash, Read; its children '
            "go without",
            False,
        ),
    ]


def test_a_whole_mcp_server_is_its_plugin(tmp_path):
    lib, claude_user, _ = claude_library(tmp_path)
    text = "---\nname: s\ndescription: d\ntools: mcp__github, mcp__db__query\n"
    put(claude_user, "s.md", text + "disallowedTools: [mcp__slack]\n---\n")
    loaded = lib.load().get("s")
    assert (loaded.tools, loaded.disallowed_tools) == (("mcp.github", "db__query"), ("mcp.slack",))


def test_invalid_yaml_is_one_line_naming_the_file_and_the_others_load(tmp_path):
    lib, claude_user, _ = claude_library(tmp_path)
    put(claude_user, "a.md", REVIEWER)
    broken = put(claude_user, "b.md", "---\nname: broken\ndescription: [unclosed\n---\nBody\n")
    listed = put(claude_user, "c.md", "---\n- name\n- description\n---\nBody\n")
    nameless = put(claude_user, "d.md", "---\ndescription: no name\n---\n")
    typed = put(claude_user, "e.md", "---\nname: typed\ndescription: d\nmaxTurns: many\n---\n")
    tools = put(claude_user, "f.md", "---\nname: f\ndescription: d\ntools: {Read: true}\n---\n")
    loaded = lib.load()
    assert loaded.names() == ["code-reviewer", "Explore", "general-purpose"]
    messages = [str(d) for d in loaded.diagnostics if d.skipped]
    assert messages == [
        f"{broken}: invalid YAML: expected ',' or ']', but got '<stream end>' (line 3)",
        f"{listed}: the front matter must be a mapping of keys to values",
        f"{nameless}: name: required",
        f"{typed}: maxTurns: expected integer, got string",
        f"{tools}: tools: must be a list of tool names or one comma-separated string",
    ]
    assert all("\n" not in message for message in messages)


def test_our_files_win_over_claude_code_files_and_project_over_user(tmp_path):
    lib, claude_user, claude_project = claude_library(tmp_path)
    ours = write(tmp_path / "home" / "agents", "r.md", "code-reviewer", "ours")
    theirs = put(claude_project, "r.md", REVIEWER)
    put(claude_user, "s.md", "---\nname: solo\ndescription: user solo\n---\n")
    put(claude_project, "s.md", "---\nname: solo\ndescription: project solo\n---\n")
    put(claude_user, "g.md", "---\nname: general-purpose\ndescription: their gp\n---\n")
    loaded = lib.load()
    assert {p.name: (p.source, p.description) for p in loaded.profiles} == {
        "code-reviewer": ("user", "ours"),
        "Explore": ("built-in", EXPLORE.description),
        "general-purpose": ("claude-user", "their gp"),
        "solo": ("claude-project", "project solo"),
    }
    assert [str(d) for d in loaded.diagnostics] == [
        f'{theirs}: name: "code-reviewer" is defined by {ours}, which wins; skipped'
    ]


def test_claude_code_project_files_are_bounded_like_ours(tmp_path):
    lib, _, claude_project = claude_library(tmp_path)
    put(claude_project, "a.md", "---\nname: asker\ndescription: d\ntools: AskUserQuestion\n---\n")
    keeper = put(claude_project, "k.md", "---\nname: keeper\ndescription: d\nmemory: local\n---\n")
    loaded = lib.load(ToolFilter(deny=["ask_user"]))
    assert loaded.names() == ["Explore", "general-purpose"]
    problems = [d.problem for d in loaded.diagnostics]
    assert problems[0] == "names tools the deployment does not allow: ask_user"
    assert problems[1].startswith(
        'profile "keeper": a project profile may keep project or local memory only if'
    )
    assert str(keeper) in str(loaded.diagnostics[1])


async def test_a_child_from_a_claude_code_file_gets_the_mapped_tools_and_its_body(tmp_path):
    host, dirs = profile_host(tmp_path)
    text = "---\nname: planner\ndescription: d\ntools: AskUserQuestion, Task, Read\n---\nYou plan."
    put(dirs.project / ".claude" / "agents", "p.md", text)
    model = scripted(host)
    model.script("plan", say("planned"))
    try:
        root = await host.services.agents.create(label="root")
        result = await delegate(host, root, "plan", "planner")
        assert (result.text, result.structured["subagent_type"]) == ("planned", "planner")
        request = model.requests_for("plan")[0]
        assert [t.name for t in request.tools] == ["ask_user", "subagent"]
        assert "You plan." in request.system_prompt
    finally:
        await host.aclose()


def test_a_long_description_with_examples_is_cut_not_refused(tmp_path):
    lib, claude_user, _ = claude_library(tmp_path)
    example = (
        '<example>\\nContext: The user has just written a function.\\nuser: \\"Please review '
        'this\\"\\nassistant: \\"I will use the reviewer agent.\\"\\n</example>\\n'
    )
    text = (
        '---\nname: reviewer\ndescription: "Use this agent after writing code.\\n\\n'
        f'Examples:\\n{example * 12}"\ntools: Read\n---\nYou review.\n'
    )
    path = put(claude_user, "reviewer.md", text)
    loaded = lib.load()
    profile = loaded.get("reviewer")
    assert profile is not None and len(profile.description) <= 1024
    assert profile.description.startswith("Use this agent after writing code. Examples: <example>")
    assert profile.description.endswith("…")
    assert f'{path}: description: profile "reviewer": cut to 1024 characters' in [
        str(d) for d in loaded.diagnostics
    ]


HUNTER = """\
---
name: silent-failure-hunter
description: Use this agent when reviewing code for silent failures. Examples:\\n\\n<example>\\nContext: A feature was just finished.\\nuser: "I've added error handling. Can you review it?"\\nassistant: "I'll use the silent-failure-hunter agent."\\n</example>
model: inherit
maxTurns: 5
color: yellow
---
You hunt silent failures.
"""

FOLDED = """\
---
name: folded
description: Reviews code. Use when:
  the user asks for a review, or
  after a commit: always.
tools: Task
---
You review.
"""


def test_unquoted_colons_read_as_claude_code_reads_them(tmp_path):
    lib, claude_user, _ = claude_library(tmp_path)
    put(claude_user, "hunter.md", HUNTER)
    put(claude_user, "folded.md", FOLDED)
    loaded = lib.load()
    assert loaded.diagnostics == ()
    hunter = loaded.get("silent-failure-hunter")
    assert hunter.description.startswith(
        "Use this agent when reviewing code for silent failures. Examples:\\n\\n<example>\\n"
        "Context: A feature was just finished.\\nuser: \"I've added error handling."
    )
    assert (hunter.max_steps, hunter.model) == (5, None)  # other values keep their types
    folded = loaded.get("folded")
    assert folded.description == (
        "Reviews code. Use when: the user asks for a review, or after a commit: always."
    )
    assert folded.tools == ("subagent",)


async def test_file_and_shell_tools_map_to_the_workspace_tools_when_it_offers_them(tmp_path):
    host, dirs = profile_host(tmp_path, ("workspace", agent_host_workspace))
    claude_project = dirs.project / ".claude" / "agents"
    put(claude_project, "code-reviewer.md", REVIEWER)
    put(claude_project, "coordinator.md", COORDINATOR)
    text = "---\nname: scribe\ndescription: d\ntools: Read, Write, Edit, WebFetch\n---\nYou write."
    scribe_file = put(claude_project, "scribe.md", text)
    model = scripted(host)
    model.script("review", say("reviewed"))
    try:
        loaded = host.profiles.load()
        review = loaded.get("code-reviewer")
        assert review.tools == ("read_file", "grep", "list_files", "run_command")
        assert loaded.get("coordinator").disallowed_tools == ("run_command",)
        assert loaded.get("scribe").tools == ("read_file", "write_file", "edit_file")
        assert [str(d) for d in loaded.diagnostics if d.field == "tools"] == [
            f'{scribe_file}: tools: profile "scribe": no host tool for WebFetch; its children '
            "go without"
        ]  # the reviewer's tools all map now
        root = await host.services.agents.create(label="root")
        await delegate(host, root, "review", "code-reviewer")
        request = model.requests_for("review")[0]
        assert sorted(t.name for t in request.tools) == [
            "grep", "list_files", "read_file", "run_command",
        ]  # fmt: skip
    finally:
        await host.aclose()
