"""The ``postgres`` plugin: configuration, the service rule, migrations, stored damage."""

from __future__ import annotations

import agent_host_postgres
import psycopg
import pytest
from agent_host_postgres import DSN_ENV, Config, resolve_dsn
from agent_host_postgres.persistence import PostgresPersistence
from agent_host_postgres.schema import LATEST

from host.agents import say
from host.sessions.jsonl import JsonlPersistence
from host.sessions.loading import load
from host.sessions.model import Event, MessageEvent, SessionHeader, TurnEnd, TurnStart
from host.sessions.persistence import PersistenceError
from host.testing import HostHarness
from tests.support import plugin_row

PLUGIN = ("postgres", agent_host_postgres)


# -- configuration -----------------------------------------------------------------------------


def test_dsn_resolution() -> None:
    assert resolve_dsn(Config(), {}) is None
    assert resolve_dsn(Config(dsn="postgresql://file"), {}) == "postgresql://file"
    assert resolve_dsn(Config(dsn="postgresql://file"), {DSN_ENV: " "}) == "postgresql://file"
    assert resolve_dsn(Config(dsn="postgresql://file"), {DSN_ENV: "postgresql://env"}) == (
        "postgresql://env"
    )


def test_without_a_dsn_jsonl_keeps_serving(make_host) -> None:
    host = make_host(PLUGIN)
    assert plugin_row(host, "postgres")["state"] == "active"
    assert isinstance(host.services.get("session_persistence"), JsonlPersistence)


def test_a_dsn_replaces_jsonl_and_blocking_the_plugin_brings_it_back(
    make_host, dsn: str, schema: str
) -> None:
    host = make_host(PLUGIN, config={"plugins": {"postgres": {"dsn": dsn, "schema": schema}}})
    assert plugin_row(host, "postgres")["state"] == "active" and plugin_row(host, "postgres")[
        "services"
    ] == ["session_persistence"]
    assert plugin_row(host, "session_persistence")["services"] == []  # standing aside
    assert isinstance(host.services.get("session_persistence"), PostgresPersistence)
    assert isinstance(host.services.get("sessions").persistence, PostgresPersistence)

    host.plugins.block("postgres")

    assert isinstance(host.services.get("session_persistence"), JsonlPersistence)
    assert isinstance(host.services.get("sessions").persistence, JsonlPersistence)
    assert plugin_row(host, "session_persistence")["services"] == ["session_persistence"]
    host.plugins.unblock("postgres")
    assert isinstance(host.services.get("sessions").persistence, PostgresPersistence)


def test_a_bad_schema_name_fails_clearly(make_host) -> None:
    host = make_host(
        PLUGIN,
        config={"plugins": {"postgres": {"dsn": "postgresql://x@127.0.0.1:1/x", "schema": "a;b"}}},
    )
    assert (
        plugin_row(host, "postgres")["state"] == "failed"
        and "schema" in plugin_row(host, "postgres")["error"]
    )


@pytest.mark.parametrize(
    ("key", "value", "why"),
    [
        ("connect_timeout", 0, "connect_timeout must be >= 1"),
        ("host_name", "a b", "host_name must match"),
        ("host_name", "x" * 64, "host_name must match"),
    ],
)
def test_bad_connection_settings_fail_clearly(make_host, key: str, value: object, why: str):
    config = {"dsn": "postgresql://x@127.0.0.1:1/x", key: value}
    host = make_host(PLUGIN, config={"plugins": {"postgres": config}})
    row = plugin_row(host, "postgres")
    assert row["state"] == "failed" and why in row["error"] and "\n" not in row["error"]


def test_connection_settings_reach_the_store(make_host, dsn: str, schema: str) -> None:
    settings = {"dsn": dsn, "schema": schema, "connect_timeout": 3, "host_name": "web-1.eu"}
    host = make_host(PLUGIN, config={"plugins": {"postgres": settings}})
    persistence = host.services.get("session_persistence")
    assert isinstance(persistence, PostgresPersistence)
    assert persistence.connect_timeout == 3 and persistence.host_id.startswith("web-1.eu:")
    persistence.open_writer(SessionHeader(id="s1"), create=True).close()
    with psycopg.connect(dsn, autocommit=True) as conn:
        names = conn.execute(
            "SELECT application_name FROM pg_stat_activity WHERE application_name LIKE %s",
            ("agent-host web-1.eu:%",),
        ).fetchall()
    assert names and {n for (n,) in names} == {f"agent-host {persistence.host_id}"}


def test_unreachable_database_is_a_clear_error() -> None:
    with pytest.raises(PersistenceError) as err:
        PostgresPersistence("postgresql://nobody@127.0.0.1:1/none", connect_timeout=2)
    assert err.value.code == "PERSISTENCE_FAILED" and "connect" in err.value.message


# -- in a host ---------------------------------------------------------------------------------


async def test_host_sessions_live_in_postgres(
    dsn: str, schema: str, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DSN_ENV, dsn)
    harness = HostHarness(
        PLUGIN,
        data_dir=tmp_path / "data",
        config={"plugins": {"postgres": {"schema": schema}}},
    )
    try:
        assert plugin_row(harness.host, "postgres")["state"] == "active"
        persistence = harness.services.get("session_persistence")
        assert isinstance(persistence, PostgresPersistence)
        harness.model.script("w", say("hello from postgres"))
        agent = await harness.root("w")
        agent.steer("hi")
        await agent.wait_idle()
        messages = await harness.stored_messages(agent.session.id)
        assert [m.content for m in messages][-1] == "hello from postgres"
        assert harness.session_ids() == set()  # no JSONL files
        assert agent.session.id in {h.id for h in await persistence.list()}
    finally:
        await harness.close()


# -- migrations --------------------------------------------------------------------------------


def test_migrations_apply_once_and_are_recorded(dsn: str, schema: str) -> None:
    first = PostgresPersistence(dsn, schema=schema)
    second = PostgresPersistence(dsn, schema=schema)
    assert first.schema_version == second.schema_version == LATEST
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(f"SELECT version FROM {schema}.schema_version").fetchall()
    assert [r[0] for r in rows] == list(range(1, LATEST + 1))


def test_a_newer_schema_is_refused(dsn: str, schema: str) -> None:
    PostgresPersistence(dsn, schema=schema)
    with psycopg.connect(dsn) as conn:
        conn.execute(f"INSERT INTO {schema}.schema_version (version) VALUES (%s)", (LATEST + 1,))
    with pytest.raises(PersistenceError) as err:
        PostgresPersistence(dsn, schema=schema)
    assert err.value.code == "PERSISTENCE_FAILED" and "newer" in err.value.message


# -- damage in the database (never torn, but rows can be edited by hand) -----------------------


async def test_a_damaged_event_row_is_seen_by_inspect_and_refused_by_load(
    dsn: str, schema: str
) -> None:
    persistence = PostgresPersistence(dsn, schema=schema)
    events = [
        Event(0, TurnStart(turn_id="t")),
        Event(1, MessageEvent(role="user", content="a")),
        Event(2, TurnEnd(turn_id="t", stop_reason="completed")),
    ]
    persistence.open_writer(SessionHeader(id="s1"), create=True, events=events).close()
    with psycopg.connect(dsn) as conn:
        conn.execute(f"UPDATE {schema}.events SET body = 'garbage' WHERE seq = 1")
    stored = await persistence.inspect("s1")
    assert [e.seq for e in stored.events] == [0] and stored.damaged_middle
    with pytest.raises(PersistenceError) as err:
        await load(persistence, "s1")
    assert err.value.code == "CORRUPT"


async def test_an_unreadable_header_row_is_skipped_by_list(dsn: str, schema: str) -> None:
    persistence = PostgresPersistence(dsn, schema=schema)
    persistence.open_writer(SessionHeader(id="a", created_at=1), create=True).close()
    persistence.open_writer(SessionHeader(id="b", created_at=2), create=True).close()
    with psycopg.connect(dsn) as conn:
        conn.execute(f"UPDATE {schema}.sessions SET header = 'junk' WHERE id = 'a'")
    assert [h.id for h in await persistence.list()] == ["b"]
    with pytest.raises(PersistenceError) as err:
        await persistence.inspect("a")
    assert err.value.code == "CORRUPT"


async def test_list_decodes_only_headers_it_has_not_seen(dsn: str, schema: str, monkeypatch) -> None:
    """A warm list decodes nothing; what other hosts created, deleted or rewrote (here by hand)
    since the last list is what it shows."""
    decoded: list[str] = []
    decode = PostgresPersistence._decode_header

    def counting(sid: str, text: str) -> SessionHeader:
        decoded.append(sid)
        return decode(sid, text)

    monkeypatch.setattr(PostgresPersistence, "_decode_header", staticmethod(counting))
    here = PostgresPersistence(dsn, schema=schema)
    other = PostgresPersistence(dsn, schema=schema)
    try:
        for i in range(3):
            here.open_writer(SessionHeader(id=f"s{i}", created_at=i + 1), create=True).close()
        assert [h.id for h in await here.list()] == ["s0", "s1", "s2"]
        decoded.clear()
        assert [h.id for h in await here.list()] == ["s0", "s1", "s2"]
        assert decoded == []
        other.open_writer(SessionHeader(id="s3", created_at=0), create=True).close()
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f"DELETE FROM {schema}.sessions WHERE id = 's1'")
            conn.execute(f"UPDATE {schema}.sessions SET header = 'junk' WHERE id = 's2'")
        assert [h.id for h in await here.list()] == ["s3", "s0"]
        assert sorted(decoded) == ["s2", "s3"]
        decoded.clear()
        assert [h.id for h in await here.list()] == ["s3", "s0"]
        assert decoded == []  # the unreadable line is remembered as unreadable
    finally:
        here.close()
        other.close()
