"""Cross-host delivery between two hosts in one process over one database.

Each ``HostHarness`` has its own ``PostgresPersistence`` (its own host id, pool, heartbeat and
LISTEN thread), so the hosts meet only in the database. Real separate processes are in
``test_multi_host.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import psycopg
import pytest

from host.agents import ModelRequest, say
from host.agents.agent import Agent
from host.agents.models import ModelResponse
from host.sessions.model import InboxAccepted
from host.subagents.types import ChildRequest
from host.testing import HostHarness
from tests.support import accepted, soon

Hosts = tuple[HostHarness, HostHarness]


@pytest.fixture
def hosts(make_postgres_host: Callable[[str], HostHarness]) -> Hosts:
    return make_postgres_host("a"), make_postgres_host("b")


async def held_child(a: HostHarness, parent: Agent, label: str) -> tuple[Agent, asyncio.Event]:
    """A continuable child on ``a`` whose first turn waits for the returned event."""
    entered, release = asyncio.Event(), asyncio.Event()

    async def hold(request: ModelRequest) -> ModelResponse:
        entered.set()
        await release.wait()
        return say(f"{label} done")

    a.model.script(label, hold, say(f"{label} again"))
    started = await a.subagents.start_continuable(
        "spawn", ChildRequest(prompt="work"), parent=parent, label=label
    )
    await entered.wait()
    child = a.agents.get(started.child_id)
    assert child is not None
    return child, release


async def parent_moved_to(a: HostHarness, b: HostHarness, parent: Agent) -> Agent:
    """Release ``parent`` on ``a`` (its child stays resident there) and resume it on ``b``."""
    await parent.dispose()
    return await b.agents.resume(parent.id, label="root")


async def test_followup_to_a_child_held_by_another_host_is_delivered_there(hosts: Hosts) -> None:
    a, b = hosts
    parent_a = await a.root()
    child, release = await held_child(a, parent_a, "c")
    parent_b = await parent_moved_to(a, b, parent_a)

    message_id = await b.subagents.followup(
        parent_b, child.id, "hello from b", source={"kind": "coordinator"}
    )

    assert await soon(lambda: any(m.message_id == message_id for m in accepted(child)), timeout=10)
    body = next(m for m in accepted(child) if m.message_id == message_id)
    assert (body.delivery, body.content) == ("followup", "hello from b")
    assert b.agents.get(child.id) is None  # never resumed on b
    release.set()
    # both turns ran, then it settled
    assert await soon(lambda: a.activation(child.id) is None, timeout=10)
    stored = await b.stored_messages(child.id)
    assert [(m.role, m.content) for m in stored][-2:] == [
        ("user", "hello from b"),
        ("assistant", "c again"),
    ]


async def test_report_to_a_parent_on_another_host(hosts: Hosts) -> None:
    a, b = hosts
    parent_a = await a.root()
    child, release = await held_child(a, parent_a, "c")
    parent_b = await parent_moved_to(a, b, parent_a)

    message_id = await a.subagents.report_from(child, "halfway", delivery="quiet")

    assert await soon(
        lambda: any(m.message_id == message_id for m in accepted(parent_b)), timeout=10
    )
    body = next(m for m in accepted(parent_b) if m.message_id == message_id)
    assert body.delivery == "inject"
    assert body.source == {"kind": "subagent-report", "sender_session_id": child.id}
    assert "halfway" in body.content
    release.set()


async def test_an_orphaned_message_is_delivered_by_its_sender(hosts: Hosts, dsn, schema) -> None:
    """The holder released the child before delivering: the sender resumes it and delivers
    the queued message under the id it already returned."""
    a, b = hosts
    parent_a = await a.root()
    child, release = await held_child(a, parent_a, "c")
    parent_b = await parent_moved_to(a, b, parent_a)
    assert a.agents.remote is not None
    a.agents.remote.close()  # a stops receiving: the message stays queued
    b.model.script("c", say("resumed on b"))

    message_id = await b.subagents.followup(parent_b, child.id, "for you", source=None)
    with psycopg.connect(dsn, autocommit=True) as conn:
        queued = conn.execute(f"SELECT message_id FROM {schema}.remote_inbox").fetchall()
    assert queued == [(message_id,)]

    release.set()  # the child finishes its turn and settles on a, releasing its lease

    async def delivered() -> list[InboxAccepted]:
        events = await b.stored_events(child.id)
        return [e.body for e in events if isinstance(e.body, InboxAccepted)]

    deadline = asyncio.get_running_loop().time() + 10
    while not any(m.message_id == message_id for m in await delivered()):
        assert asyncio.get_running_loop().time() < deadline, "orphan not delivered in time"
        await asyncio.sleep(0.05)
    assert [m.message_id for m in await delivered()].count(message_id) == 1
    with psycopg.connect(dsn, autocommit=True) as conn:
        left = conn.execute(f"SELECT count(*) FROM {schema}.remote_inbox").fetchone()
        owner = conn.execute(
            f"SELECT owner FROM {schema}.leases WHERE session_id = %s", (child.id,)
        ).fetchone()
    assert left == (0,)
    b_host = b.services.get("session_persistence").host_id
    assert owner in ((b_host,), (None,))  # resumed (and perhaps settled again) on b
    assert await soon(lambda: b.activation(child.id) is None, timeout=10)
    messages = await b.stored_messages(child.id)
    assert [(m.role, m.content) for m in messages][-2:] == [
        ("user", "for you"),
        ("assistant", "resumed on b"),
    ]


async def test_a_child_settling_on_one_host_notifies_its_parent_on_another(hosts: Hosts) -> None:
    a, b = hosts
    parent_a = await a.root()
    child, release = await held_child(a, parent_a, "c")
    parent_b = await parent_moved_to(a, b, parent_a)
    b.model.script("root", say("noted"))

    release.set()  # the child's turn ends and it settles on a

    def notices() -> list[InboxAccepted]:
        return [m for m in accepted(parent_b) if (m.source or {}).get("kind") == "subagent-settled"]

    assert await soon(lambda: len(notices()) == 1, timeout=10)
    notice = notices()[0]
    assert notice.delivery == "followup"  # the parent was idle
    assert notice.source == {"kind": "subagent-settled", "sender_session_id": child.id}
    assert notice.content.startswith(f"Background subagent {child.id} ")
    assert "c done" in notice.content
