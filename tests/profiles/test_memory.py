"""A profile's memory through a real host: children of one profile share it, across restarts
and cold resumes; the index is cut after 200 lines; paths cannot leave the directory."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

from host.agents.scripted import call, calls, say, tool_call
from host.memory.store import INDEX_LINES
from host.sessions.model import SubagentDescriptorEvent
from host.testing import call_tool
from tests.profiles.support import delegate, library, profile_host, seen, settle, write
from tests.support import scripted, tool_results

INDEX_LINE = "- [Tabs](tabs.md): the user indents with tabs"
MEMORY_TOOLS = ["memory_list", "memory_read", "memory_write"]


def memory_profile(dirs, name: str) -> Path:
    """A user profile ``name`` keeping user memory, and its (existing) memory directory."""
    write(dirs.user, f"{name}.md", name, memory="user")
    memory = dirs.home / "agent-memory" / name
    memory.mkdir(parents=True)
    return memory


async def test_children_of_one_profile_share_its_memory_across_a_restart(tmp_path):
    host, dirs = profile_host(tmp_path)
    write(dirs.user, "notes.md", "notes", memory="user", tools="[]", persona="You take notes.")
    memory = dirs.home / "agent-memory" / "notes"
    model = scripted(host)
    model.script(
        "first",
        calls(
            tool_call("memory_write", path="tabs.md", content="The user indents with tabs."),
            tool_call("memory_write", path="MEMORY.md", content=INDEX_LINE + "\n"),
        ),
        say("remembered"),
    )
    model.script("second", call("memory_read", path="tabs.md"), say("recalled"))
    try:
        root = await host.services.agents.create(label="root")
        assert not memory.exists()  # created by the first write, not before
        assert (await delegate(host, root, "first", "notes")).text == "remembered"
        tools, prompt = seen(model, "first")
        assert tools == MEMORY_TOOLS  # its own scope: "tools: []" does not remove them
        assert "MEMORY.md is empty" in prompt
        assert (memory / "tabs.md").read_text() == "The user indents with tabs."
        assert (memory / "MEMORY.md").read_text() == INDEX_LINE + "\n"

        assert (await delegate(host, root, "second", "notes")).text == "recalled"
        _, prompt = seen(model, "second")
        assert prompt.index("You take notes.") < prompt.index("# Your memory")
        assert prompt.index("# Your memory") < prompt.index(INDEX_LINE)
        assert tool_results(model.requests_for("second")[1].messages) == [("The user indents with tabs.", False)]
    finally:
        await host.aclose()

    again, _ = profile_host(tmp_path)  # a restart: same files, a new process's host
    try:
        model = scripted(again)
        model.script("third", say("still know"))
        root = await again.services.agents.create(label="root")
        await delegate(again, root, "third", "notes")
        assert INDEX_LINE in seen(model, "third")[1]
    finally:
        await again.aclose()


async def test_a_cold_resumed_child_keeps_its_memory_after_the_profile_file_is_gone(tmp_path):
    host, dirs = profile_host(tmp_path)
    path = write(dirs.user, "keeper.md", "keeper", memory="user")
    memory = dirs.home / "agent-memory" / "keeper"
    model = scripted(host)
    model.script("keep", call("memory_write", path="a.md", content="one"), say("kept"))
    try:
        root = await host.services.agents.create(label="root")
        root_id = root.id
        child_id = (await delegate(host, root, "keep", "keeper", True)).structured["subagent_id"]
        await settle(host, child_id, root)
        stored = await host.services.session_persistence.inspect(child_id)
        (event,) = [e.body for e in stored.events if isinstance(e.body, SubagentDescriptorEvent)]
    finally:
        await host.aclose()
    assert event.descriptor["memory"] == {"scope": "user", "directory": str(memory)}

    path.unlink()
    again, _ = profile_host(tmp_path)
    try:
        assert "keeper" not in again.profiles.load().names()
        model = scripted(again)
        model.script("keep", call("memory_list"), say("listed"))
        root = await again.services.agents.resume(root_id, label="root")
        await again.services.subagents.followup(
            root, child_id, "What do you know?", source={"kind": "coordinator"}
        )
        await settle(again, child_id, root)
        tools, prompt = seen(model, "keep", 0)
        assert set(MEMORY_TOOLS) <= set(tools) and "[a.md]" not in prompt
        assert tool_results(model.requests_for("keep")[1].messages)[-1] == ("a.md (3 bytes)", False)
    finally:
        await again.aclose()


async def test_the_index_is_cut_after_200_lines(tmp_path):
    host, dirs = profile_host(tmp_path)
    memory = memory_profile(dirs, "long")
    lines = [f"- [m{n}](m{n}.md): memory number {n}" for n in range(1, 251)]
    (memory / "MEMORY.md").write_text("\n".join(lines) + "\n")
    model = scripted(host)
    model.script("cut", say("ok"))
    try:
        root = await host.services.agents.create(label="root")
        await delegate(host, root, "cut", "long")
        _, prompt = seen(model, "cut")
        assert lines[INDEX_LINES - 1] in prompt and lines[INDEX_LINES] not in prompt
        assert "only its first 200 lines are shown" in prompt
    finally:
        await host.aclose()


async def test_a_path_outside_the_directory_is_an_error_for_the_model(tmp_path):
    host, dirs = profile_host(tmp_path)
    memory = memory_profile(dirs, "escaper")
    outside = tmp_path / "outside"
    outside.mkdir()
    (memory / "link").symlink_to(outside)
    model = scripted(host)
    model.script(
        "escape",
        calls(
            tool_call("memory_write", path="../stolen.md", content="x"),
            tool_call("memory_write", path="link/stolen.md", content="x"),
            tool_call("memory_read", path=str(tmp_path / "outside" / "x")),
        ),
        say("refused"),
    )
    try:
        root = await host.services.agents.create(label="root")
        await delegate(host, root, "escape", "escaper")
        results = tool_results(model.requests_for("escape")[1].messages)
        assert results == [
            ("memory_write: '../stolen.md' is outside the memory directory", True),
            ("memory_write: 'link/stolen.md' is outside the memory directory", True),
            (f"memory_read: {str(outside / 'x')!r} is outside the memory directory", True),
        ]
        assert list(outside.iterdir()) == [] and not (memory.parent / "stolen.md").exists()
    finally:
        await host.aclose()


async def test_a_profile_whose_memory_directory_is_a_file_is_unavailable(tmp_path):
    host, dirs = profile_host(tmp_path)
    path = write(dirs.user, "broken.md", "broken", memory="user")
    write(dirs.user, "fine.md", "fine")
    (dirs.home / "agent-memory").mkdir(parents=True)
    (dirs.home / "agent-memory" / "broken").write_text("not a directory")
    try:
        loaded = host.profiles.load()
        assert "broken" not in loaded.names() and "fine" in loaded.names()
        assert [str(d) for d in loaded.diagnostics] == [
            f'{path}: memory: profile "broken": memory directory '
            f"{dirs.home / 'agent-memory' / 'broken'} is not a directory"
        ]
        root = await host.services.agents.create(label="root")
        args = {"description": "x", "prompt": "p", "subagent_type": "broken"}
        result = await call_tool(host, "subagent", args, agent=root)
        assert result.is_error and "is not a directory" in result.text

        (dirs.home / "agent-memory" / "broken").unlink()  # fixed: the next load sees it
        assert "broken" in host.profiles.load().names()
    finally:
        await host.aclose()


def project_memory_allowed(home: Path, value: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "agent-host.toml").write_text(f"[profiles]\nproject_profile_memory = {value}\n")


async def test_project_profiles_keep_project_memory_only_when_the_user_allows_it(tmp_path):
    host, dirs = profile_host(tmp_path)
    path = write(dirs.project_agents, "p.md", "shared", memory="project")
    write(dirs.project_agents, "u.md", "mine", memory="user")  # user memory needs no consent
    write(dirs.user, "l.md", "local-notes", memory="local")  # a user profile may use any
    try:
        loaded = host.profiles.load()
        assert loaded.names() == ["Explore", "general-purpose", "local-notes", "mine"]
        (diagnostic,) = loaded.diagnostics
        assert str(diagnostic) == (
            f'{path}: memory: profile "shared": a project profile may keep project or local '
            "memory only if the user allows it: set [profiles] project_profile_memory = true "
            f"in {dirs.home / 'agent-host.toml'}"
        )
        project_memory_allowed(dirs.home, "true")
        loaded = host.profiles.load()
        assert loaded.diagnostics == ()
        assert loaded.get("shared").memory_dir == str(
            dirs.project / ".agent-host" / "agent-memory" / "shared"
        )
        assert loaded.get("local-notes").memory_dir == str(
            dirs.project / ".agent-host" / "agent-memory-local" / "local-notes"
        )
        (tmp_path / "elsewhere").mkdir()
        (dirs.project / ".agent-host" / "agent-memory").symlink_to(tmp_path / "elsewhere")
        (diagnostic,) = host.profiles.load().diagnostics
        assert diagnostic.problem == (
            f'profile "shared": {dirs.project / ".agent-host" / "agent-memory"} is a symbolic '
            "link; project memory is not kept through links"
        )
        project_memory_allowed(dirs.home, '"yes"')
        (diagnostic,) = host.profiles.load().diagnostics
        assert diagnostic.problem == (
            f'profile "shared": {dirs.home / "agent-host.toml"}: [profiles] '
            "project_profile_memory must be true or false"
        )
    finally:
        await host.aclose()


@contextlib.contextmanager
def unwritable(directory: Path) -> Iterator[None]:
    """``directory`` not writable: by its mode, or (root may write anyway) immutable."""
    directory.chmod(0o555)
    immutable = os.access(directory, os.W_OK)
    if immutable:
        subprocess.run(["chattr", "+i", str(directory)], check=True)
    try:
        assert not os.access(directory, os.W_OK)
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(directory)], check=True)
        directory.chmod(0o755)


def test_a_profile_whose_memory_directory_is_not_writable_is_unavailable(tmp_path):
    lib, user, _ = library(tmp_path)
    path = write(user, "ro.md", "ro", memory="user")
    write(user, "fine.md", "fine", memory="user")
    folder = tmp_path / "home" / "agent-memory"
    (folder / "ro").mkdir(parents=True)
    with unwritable(folder / "ro"):
        loaded = lib.load()
        assert loaded.names() == ["Explore", "fine", "general-purpose"]
        assert [str(d) for d in loaded.diagnostics] == [
            f'{path}: memory: profile "ro": {folder / "ro"} is not writable'
        ]
    assert lib.load().names() == ["Explore", "fine", "general-purpose", "ro"]


async def test_a_10_mb_index_is_one_note_and_its_head_still_reaches_the_child(tmp_path):
    host, dirs = profile_host(tmp_path)
    memory = memory_profile(dirs, "hoarder")
    line = "- [m](m.md): " + "x" * 86 + "\n"  # 100 bytes
    (memory / "MEMORY.md").write_text(line * 100_000)  # 10 MB
    model = scripted(host)
    model.script("big", say("ok"))
    try:
        loaded = host.profiles.load()
        assert "hoarder" in loaded.names()
        assert [(str(d), d.skipped) for d in loaded.diagnostics] == [
            (
                f'{dirs.user / "hoarder.md"}: memory: profile "hoarder": MEMORY.md is 10000000 '
                "bytes; its children are shown only its first 200 lines (at most 65536 bytes)",
                False,
            )
        ]
        root = await host.services.agents.create(label="root")
        await delegate(host, root, "big", "hoarder")
        _, prompt = seen(model, "big")
        assert prompt.count(line.strip()) == INDEX_LINES
        assert prompt.endswith("only its first 200 lines are shown. Shorten it.)")
    finally:
        await host.aclose()
