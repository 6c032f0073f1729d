"""The memory directory on its own: confinement, bounded reads, atomic writes, the prompt
section, and the descriptor key that carries a memory across a cold resume."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, cast

import pytest

from host.memory.store import (
    FILE_BYTES,
    INDEX_BYTES,
    IndexHead,
    MemoryDirectory,
    Refused,
    repository_links,
)
from host.memory.tools import LIST_MAX, ListArgs, memory_tools, section_text
from host.subagents.descriptors import ContinuableDescriptor, Corrupt, MemorySpec, parse_descriptor
from host.tools.tool import ToolExec
from tests.test_project_files import swapped_after_the_check


@pytest.fixture
def memory(tmp_path: Path) -> MemoryDirectory:
    return MemoryDirectory(tmp_path / "memory" / "notes")


def test_write_creates_the_directory_and_read_list_see_the_file(memory):
    assert memory.listing() == [] and memory.index_head() == IndexHead()
    assert memory.write("topics/tabs.md", "tabs") == "wrote 4 bytes to topics/tabs.md"
    assert memory.read("topics/tabs.md") == "tabs"
    assert memory.listing() == [("topics/tabs.md", 4)]
    assert memory.write("topics/tabs.md", "") == "deleted topics/tabs.md"
    assert memory.listing() == []
    assert [p.name for p in memory.root.rglob("*") if p.is_file()] == []  # no temporary left


@pytest.mark.parametrize(
    "path",
    [
        "../x.md",
        "a/../../x.md",
        "/etc/passwd",
        ".",
        "",
        "a/b/../../../x",
        ".hidden",
        "a/.git/config",
    ],
)
def test_paths_that_leave_the_directory_or_hide_are_refused(memory, path, tmp_path):
    with pytest.raises(Refused):
        memory.write(path, "x")
    with pytest.raises(Refused):
        memory.read(path)
    written = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    assert written == []


def test_symlinks_out_of_the_directory_are_refused(memory, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("secret")
    memory.root.mkdir(parents=True)
    (memory.root / "out").symlink_to(outside)
    (memory.root / "MEMORY.md").symlink_to(outside / "secret")
    (memory.root / "inside.md").write_text("in")
    (memory.root / "alias.md").symlink_to(memory.root / "inside.md")
    for path in ("out/secret", "out/new.md"):
        with pytest.raises(Refused, match="outside the memory directory"):
            memory.write(path, "x")
    with pytest.raises(Refused, match="outside the memory directory"):
        memory.index_head()  # an index linked to a file elsewhere is never read
    assert sorted(p.name for p in outside.iterdir()) == ["secret"]
    assert (outside / "secret").read_text() == "secret"
    (memory.root / "loop").symlink_to(memory.root / "loop")
    with pytest.raises(Refused, match="cannot be followed"):
        memory.write("loop/x.md", "x")
    assert memory.read("alias.md") == "in"  # a link that stays inside is fine
    assert memory.listing() == [("inside.md", 2)]  # links are not listed


def test_a_huge_index_is_read_only_as_far_as_needed(memory):
    memory.root.mkdir(parents=True)
    with (memory.root / "MEMORY.md").open("wb") as handle:
        handle.write(b"x" * (10 * 1024 * 1024))  # 10 MB on one line
    head = memory.index_head()
    assert head.truncated and len(head.lines) == 1 and len(head.lines[0]) == INDEX_BYTES


def test_the_index_head_keeps_200_lines(memory):
    memory.root.mkdir(parents=True)
    (memory.root / "MEMORY.md").write_text("".join(f"line {n}\n" for n in range(1, 202)))
    head = memory.index_head()
    assert head.truncated and head.lines[-1] == "line 200" and len(head.lines) == 200
    (memory.root / "MEMORY.md").write_text("".join(f"line {n}\n" for n in range(1, 201)))
    assert memory.index_head() == IndexHead(tuple(f"line {n}" for n in range(1, 201)), False)


def test_a_fifo_swapped_in_after_the_check_never_blocks_a_read(memory, monkeypatch):
    memory.write("notes.md", "notes")
    os.mkfifo(memory.root / "pipe.md")  # nobody writes: a blocking open waits forever
    swapped_after_the_check(monkeypatch, memory.root / "pipe.md", memory.root / "notes.md")
    outcome: list[str] = []

    def read() -> None:
        with pytest.raises(Refused) as refused:
            memory.read("pipe.md")
        outcome.append(str(refused.value))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=30)
    assert outcome == ["'pipe.md' is a FIFO, not a regular file"]


def test_oversized_files_special_files_and_a_root_that_is_a_file(memory, tmp_path):
    with pytest.raises(Refused, match="at most"):
        memory.write("big.md", "x" * (FILE_BYTES + 1))
    memory.root.mkdir(parents=True)
    (memory.root / "big.md").write_bytes(b"y" * (FILE_BYTES + 10))
    assert memory.read("big.md").endswith(f"[cut: the file is longer than {FILE_BYTES} bytes]")
    os.mkfifo(memory.root / "pipe.md")
    with pytest.raises(Refused, match="not a regular file"):
        memory.read("pipe.md")  # never opened, so never blocks
    with pytest.raises(Refused, match="does not exist"):
        memory.read("none.md")
    blocked = MemoryDirectory(tmp_path / "file")
    blocked.root.write_text("a file")
    with pytest.raises(Refused, match="is not a directory"):
        blocked.write("a.md", "x")
    assert blocked.root.read_text() == "a file"


def test_the_section_teaches_the_index_and_shows_its_head():
    empty = section_text("user", IndexHead())
    assert "One memory per file" in empty and "first 200 lines" in empty
    assert empty.endswith("(MEMORY.md is empty: you have no memories yet.)")
    cut = section_text("project", IndexHead(("- [a](a.md): a",), True))
    assert "directory, kept in the project and shared with everyone" in cut
    assert cut.endswith(
        "- [a](a.md): a\n(MEMORY.md goes on: only its first 200 lines are shown. Shorten it.)"
    )
    assert section_text("user", "permission denied").endswith(
        "(MEMORY.md could not be read: permission denied)"
    )


def test_the_descriptor_keeps_a_memory_with_an_absolute_directory():
    base = {"version": 2, "mode": "continuable", "provider": "spawn", "label": "a"}
    memory = {"scope": "local", "directory": "/p/.agent-host/agent-memory-local/n"}
    parsed = parse_descriptor({**base, "memory": memory})
    assert isinstance(parsed, ContinuableDescriptor)
    assert parsed.memory == MemorySpec("local", "/p/.agent-host/agent-memory-local/n")
    for bad in (
        {"scope": "global", "directory": "/d"},
        {"scope": "user", "directory": "relative/d"},
        {"scope": "user"},
        "user",
    ):
        assert isinstance(parse_descriptor({**base, "memory": bad}), Corrupt), bad


async def test_memory_list_names_at_most_500_files_and_says_how_many_more(memory):
    memory.root.mkdir(parents=True)
    for n in range(LIST_MAX + 2):
        (memory.root / f"m{n:04}.md").write_text("x")
    (listing, _, _) = memory_tools(memory)
    result = await listing.execute(ListArgs(), ToolExec(agent=None, ctx=cast(Any, None)))
    lines = result.text.splitlines()
    assert len(lines) == LIST_MAX + 1 and lines[0] == "m0000.md (1 bytes)"
    assert lines[-1] == "(and 2 more files not listed)"
    assert result.structured["total"] == LIST_MAX + 2


def test_project_memory_is_never_kept_through_a_link_the_repository_made(tmp_path):
    elsewhere = tmp_path / "home" / ".ssh"
    elsewhere.mkdir(parents=True)
    (elsewhere / "id").write_text("key")
    project = tmp_path / "project"
    (project / ".agent-host").mkdir(parents=True)
    (project / ".agent-host" / "agent-memory").symlink_to(elsewhere.parent)
    directory = project / ".agent-host" / "agent-memory" / ".ssh"
    memory = MemoryDirectory(directory, repository_links(directory, "project"))
    for attempt in (
        lambda: memory.read("id"),
        lambda: memory.write("id", "replaced"),
        memory.listing,
        memory.index_head,
    ):
        with pytest.raises(Refused, match="is a symbolic link; this memory is not kept"):
            attempt()
    assert (elsewhere / "id").read_text() == "key"
    assert repository_links(directory, "user") == ()  # the user's own links are the user's
    assert MemoryDirectory(directory).read("id") == "key"
