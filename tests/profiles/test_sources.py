"""Loading: precedence across the four sources, bad files, the deployment's limit, reloading."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path, PurePath

from host.profiles.library import locations
from host.profiles.model import Profile
from host.profiles.sources import CLOSINGS, EXPLORE, GENERAL_PURPOSE
from host.tools.filter import ToolFilter
from tests.profiles.support import environ, library, write


def describe(loaded):
    return {p.name: (p.source, p.description) for p in loaded.profiles}


def test_precedence_built_in_then_user_then_project_then_plugins(tmp_path):
    lib, user, project = library(tmp_path)
    write(user, "gp.md", "general-purpose", "user gp")
    write(user, "rev.md", "reviewer", "user reviewer")
    write(user, "solo.md", "solo", "user solo")
    write(project, "rev.md", "reviewer", "project reviewer")
    shipped = tmp_path / "plugin_agents"
    write(shipped, "w.md", "writer", "plugin writer")
    write(shipped, "r.md", "reviewer", "plugin reviewer")
    lib.register("docs", shipped)
    lib.register("more", Profile(name="writer", description="other writer", source="plugin"))
    loaded = lib.load()
    assert describe(loaded) == {
        "docs:reviewer": ("plugin", "plugin reviewer"),
        "docs:writer": ("plugin", "plugin writer"),
        "Explore": ("built-in", EXPLORE.description),
        "general-purpose": ("user", "user gp"),
        "more:writer": ("plugin", "other writer"),
        "reviewer": ("project", "project reviewer"),
        "solo": ("user", "user solo"),
    }
    # "reviewer" is taken and "writer" is shipped twice: no bare aliases for those.
    assert loaded.aliases == ()
    assert [(s.name, s.source, s.by) for s in loaded.shadowed] == [
        ("general-purpose", "built-in", "user"),
        ("reviewer", "user", "project"),
    ]
    assert loaded.diagnostics == ()


def test_built_in_general_purpose_has_every_tool_and_asks_for_a_report(tmp_path):
    lib, _, _ = library(tmp_path)
    profile = lib.load().get("general-purpose")
    assert (profile.name, profile.source, profile.tools, profile.path) == (
        "general-purpose",
        "built-in",
        None,
        None,
    )
    assert profile.persona is not None and "complete, concise final report" in profile.persona


def test_built_in_explore_has_only_the_read_tools_and_opens_with_the_read_only_rule(tmp_path):
    lib, _, _ = library(tmp_path)
    profile = lib.load().get("Explore")
    assert (profile.source, profile.tools, profile.disallowed_tools) == (
        "built-in",
        ("read_file", "list_files", "grep", "mcp.fetch"),
        (),
    )
    assert profile.persona.startswith(
        "You are read-only: never create, change, move or delete a file, and never run a "
        "command; you have no tool for it, so do not try or offer to."
    )


def test_a_built_in_personas_closing_advice_follows_the_childs_mode():
    one_shot = (
        "That final message is your answer: it is all the delegating agent sees of your work."
    )
    continuable = (
        "You run in the background: deliver that report to the delegating agent with the "
        "report tool before you finish (earlier too, when a finding changes what it should do "
        "next). Your closing message also reaches it, in the notice that you finished."
    )
    unreported = (
        "You run in the background: your closing message is what reaches the delegating "
        "agent, in the notice that you finished, so make that report complete."
    )
    assert (one_shot, continuable, unreported) == CLOSINGS
    for profile in (GENERAL_PURPOSE, EXPLORE):
        assert profile.persona_for(False, False) == f"{profile.persona} {one_shot}"
        assert profile.persona_for(True, True) == f"{profile.persona} {continuable}"
        assert profile.persona_for(True, False) == f"{profile.persona} {unreported}"
        assert "sees of your work" not in (profile.persona or "")  # the advice is in the closings only
    written = Profile(name="mine", description="d", source="user", persona="As written.")
    assert written.persona_for(False, False) == written.persona_for(True, True) == "As written."


def test_a_unique_bare_plugin_name_is_an_alias(tmp_path):
    lib, _, _ = library(tmp_path)
    shipped = write(tmp_path / "p", "w.md", "writer")
    dispose = lib.register("docs", shipped)
    assert lib.load().aliases == (("writer", "docs:writer"),)
    assert dispose() is True and dispose() is False
    assert lib.load().names() == ["Explore", "general-purpose"]


def test_bad_files_are_diagnostics_and_the_rest_load(tmp_path):
    lib, user, project = library(tmp_path)
    write(user, "a.md", "alpha")
    (user / "dir.md").mkdir()
    (user / "broken.md").symlink_to(tmp_path / "missing")
    (user / "binary.md").write_bytes(b"---\nname: \xff\n---\n")
    (user / "huge.md").write_text("---\n" + "x" * 300_000)
    (user / "notes.txt").write_text("ignored")
    (user / ".hidden.md").write_text("ignored")
    write(user, "b.md", "alpha", "second alpha")
    write(user, "c.md", "gamma", model="[a]")
    write(project, "z.md", "zeta")
    (project.parent / "agents2").mkdir()
    loaded = lib.load()
    assert describe(loaded) == {
        "alpha": ("user", "d"),
        "Explore": ("built-in", EXPLORE.description),
        "general-purpose": ("built-in", describe(loaded)["general-purpose"][1]),
        "zeta": ("project", "d"),
    }
    assert [str(d) for d in loaded.diagnostics] == [
        f'{user}/b.md: name: "alpha" is already defined by {user}/a.md; skipped',
        f"{user}/binary.md: is not UTF-8 text",
        f"{user}/broken.md: cannot be read: No such file or directory",
        f"{user}/c.md: model: expected string, got array",
        f"{user}/dir.md: is a directory, not a regular file",
        f"{user}/huge.md: larger than 262144 bytes",
    ]
    assert {d.source for d in loaded.diagnostics} == {"user"}


def test_a_hostile_file_name_stays_on_one_line(tmp_path):
    lib, user, _ = library(tmp_path)
    user.mkdir(parents=True)
    (user / "evil\nname.md").write_text("not a profile")
    (diagnostic,) = lib.load().diagnostics
    assert "\n" not in str(diagnostic) and "evil\\x0aname.md" in str(diagnostic)


def test_an_agents_path_that_is_a_file(tmp_path):
    lib, user, _ = library(tmp_path)
    user.parent.mkdir(parents=True)
    user.write_text("oops")
    assert [str(d) for d in lib.load().diagnostics] == [f"{user}: is not a directory"]


def test_bad_plugin_profiles_are_diagnostics(tmp_path):
    lib, _, _ = library(tmp_path)
    lib.register("p", Profile(name="a:b", description="d", source="plugin"))
    lib.register("p", tmp_path / "missing.md")
    lib.register("p", write(tmp_path / "x", "one.md", "same"))
    lib.register("p", write(tmp_path / "y", "two.md", "same"))
    loaded = lib.load()
    assert loaded.names() == ["Explore", "general-purpose", "p:same"]
    assert [str(d) for d in loaded.diagnostics] == [
        "plugin p: name: must not contain ':' (reserved for '<plugin>:<name>')",
        f"{tmp_path}/missing.md: cannot be read: No such file or directory",
        f'{tmp_path}/y/two.md: name: "p:same" is already registered by plugin p; skipped',
    ]


def test_project_profiles_cannot_widen_the_deployment(tmp_path):
    lib, user, project = library(tmp_path)
    deployment = ToolFilter(allow=["read_file", "grep", "shell"], deny=["shell"])
    write(project, "ok.md", "narrow", tools="read_file")
    write(project, "all.md", "everything")  # no tools: every tool the deployment allows
    write(project, "deny.md", "sneaky", tools="read_file, shell")
    write(project, "outside.md", "outside", tools="[write_file]")
    write(user, "u.md", "trusted", tools="write_file")  # the user's own files are trusted
    write(user, "s.md", "sneaky", "user sneaky", tools="grep")
    loaded = lib.load(deployment)
    assert describe(loaded)["sneaky"] == ("user", "user sneaky")  # the refused one hides nothing
    assert sorted(describe(loaded)) == [
        "Explore",
        "everything",
        "general-purpose",
        "narrow",
        "sneaky",
        "trusted",
    ]
    assert [str(d) for d in loaded.diagnostics] == [
        f"{project}/deny.md: tools: names tools the deployment does not allow: shell",
        f"{project}/outside.md: tools: names tools the deployment does not allow: write_file",
    ]
    assert "outside" in lib.load().names()  # without a deployment filter nothing is refused


def test_a_changed_file_is_read_at_the_next_load(tmp_path):
    lib, user, _ = library(tmp_path)
    path = write(user, "a.md", "alpha", "first")
    assert describe(lib.load())["alpha"] == ("user", "first")
    write(user, "a.md", "alpha", "other")  # same size, same second
    assert describe(lib.load())["alpha"] == ("user", "other")
    old = 1_000_000_000
    os.utime(path, (old, old))
    os.utime(user, (old, old))
    first = lib.load()
    assert lib.load() is first  # unchanged and settled: served from the cache
    path.unlink()
    assert "alpha" not in lib.load().names()


def test_locations_follow_agent_host_home_then_home(tmp_path):
    cwd = tmp_path / "work"
    assert locations({"AGENT_HOST_HOME": "/h"}, cwd).user == Path("/h/agents")
    assert locations({"HOME": "/home/u"}, cwd).user == Path("/home/u/.agent-host/agents")
    assert locations({}, cwd).project == cwd / ".agent-host" / "agents"


def test_claude_code_memory_and_configuration_locations(tmp_path):
    cwd = tmp_path / "work"
    sandboxed = locations({"AGENT_HOST_HOME": "/h", "HOME": "/home/u"}, cwd)
    assert sandboxed.claude_user == Path("/home/u/.claude/agents")  # the real home, always
    assert sandboxed.claude_project == cwd / ".claude" / "agents"
    assert sandboxed.config == Path("/h/agent-host.toml")
    assert sandboxed.memory_directory("user", "n") == Path("/h/agent-memory/n")
    plain = locations({"HOME": "/home/u"}, cwd)
    assert plain.config == Path("/home/u/.agent-host/agent-host.toml")
    assert plain.memory_directory("user", "n") == Path("/home/u/.agent-host/agent-memory/n")
    assert plain.memory_directory("project", "n") == cwd / ".agent-host" / "agent-memory" / "n"
    assert plain.memory_directory("local", "n") == (
        cwd / ".agent-host" / "agent-memory-local" / "n"
    )


def test_the_same_directory_is_read_once(tmp_path):
    home = tmp_path
    from host.profiles.library import ProfileLibrary

    lib = ProfileLibrary(environ={"HOME": str(home)}, cwd=home)
    write(home / ".agent-host" / "agents", "a.md", "alpha")
    assert describe(lib.load())["alpha"] == ("user", "d")
    assert lib.load().shadowed == ()


def test_an_unchanged_load_stats_each_path_once_and_converts_no_path(tmp_path, monkeypatch):
    """The delegation tool loads twice per child (its description, its start): an unchanged
    set costs one ``stat`` per directory and per profile file, nothing more — the paths to
    check are kept as text, and nothing watched is nothing to check."""
    from host.profiles.library import ProfileLibrary

    _, user, project = library(tmp_path)
    for name, value in environ(tmp_path).items():
        monkeypatch.setenv(name, value)
    write(user, "a.md", "alpha")
    project.mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "project")
    lib = ProfileLibrary()  # the process's variables and working directory, as in a host
    old = 1_000_000_000
    for path in (user / "a.md", user, project):
        os.utime(path, (old, old))  # settled: cacheable
    first = lib.load()
    stats: Counter[str] = Counter()
    converted: Counter[str] = Counter()
    real_stat, real_fspath = os.stat, PurePath.__fspath__

    def counting_stat(path, *args, **kwargs):
        stats[os.fspath(path)] += 1
        return real_stat(path, *args, **kwargs)

    def counting_fspath(self):
        converted[str(self)] += 1
        return real_fspath(self)

    monkeypatch.setattr(os, "stat", counting_stat)
    monkeypatch.setattr(PurePath, "__fspath__", counting_fspath)
    for _ in range(10):
        assert lib.load() is first
    where = lib.locations()
    monkeypatch.undo()
    assert (where.user, where.project) == (user, project)
    checked = [user, user / "a.md", project, where.claude_user, where.claude_project]
    assert stats == Counter({str(path): 10 for path in checked})
    assert converted == Counter()
