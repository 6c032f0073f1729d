"""register_profiles: plugins ship profiles, named <plugin>:<name>, taken back on deactivation."""

from __future__ import annotations

from pathlib import Path

from host import hookimpl
from host.profiles.library import ProfileLibrary
from host.testing import build_host
from tests.profiles.support import environ, write


def test_a_plugin_ships_profiles_from_its_distribution(tmp_path, monkeypatch):
    shipped = tmp_path / "pkg" / "agents"
    write(shipped, "writer.md", "writer", "Writes release notes", tools="word_count")
    write(shipped, "bad.md", "bad", max_steps="-1")

    class Docs:
        @staticmethod
        @hookimpl
        def register_profiles(register, ctx, config):
            register(shipped)

    host = build_host(("docs", Docs), data_dir=tmp_path / "data")
    try:
        library = host.services.profiles
        assert isinstance(library, ProfileLibrary) and library is host.profiles
        library.environ, library.cwd = environ(tmp_path), tmp_path
        loaded = library.load()
        assert loaded.names() == ["docs:writer", "Explore", "general-purpose"]
        assert loaded.aliases == (("writer", "docs:writer"),)
        assert [str(d) for d in loaded.diagnostics] == [
            f"{shipped}/bad.md: max_steps: must be a positive integer, got -1"
        ]
        host.plugins.block("docs")
        assert library.load().names() == ["Explore", "general-purpose"]
        host.plugins.unblock("docs")
        assert "docs:writer" in library.load().names()
    finally:
        host.close()


def test_registering_something_else_fails_the_plugin_only(tmp_path):
    class Wrong:
        @staticmethod
        @hookimpl
        def register_profiles(register):
            register(42)

    host = build_host(("wrong", Wrong), data_dir=tmp_path / "data")
    try:
        record = host.plugins.records["wrong"]
        assert record.state == "failed"
        assert "register_profiles expects a path or host.profiles.Profile, got 42" in str(
            record.error
        )
        assert host.profiles.entries() == []
    finally:
        host.close()


def test_sessions_listing_ignores_the_agents_directory(tmp_path):
    data = tmp_path / ".agent-host"
    write(data / "agents", "a.md", "alpha")
    host = build_host(data_dir=data)
    try:
        import asyncio

        async def scenario():
            agent = await host.services.agents.create(label="root")
            agent.followup("hi")
            await agent.wait_idle()
            headers = await host.services.session_persistence.list()
            return agent.id, [h.id for h in headers]

        agent_id, listed = asyncio.run(scenario())
        assert listed == [agent_id]
        assert Path(data / "agents" / "a.md").exists()
    finally:
        host.close()
