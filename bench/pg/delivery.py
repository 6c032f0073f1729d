"""Cross-host delivery latency over the NOTIFY path, against a raw NOTIFY."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import psycopg
from agent_host_postgres.persistence import PostgresPersistence

from host.sessions.model import Event, InboxAccepted, SessionHeader

from .support import percentile


def delivery_api() -> str | None:
    """Where the cross-host delivery API lives, or None when this tree does not have it."""
    try:
        from agent_host_postgres.inbox import PostgresInbox
    except ImportError:
        owner: type = PostgresPersistence  # trees before the inbox was its own module
    else:
        owner = PostgresInbox
    if all(hasattr(owner, attr) for attr in ("send_remote", "pending_remote", "watch")):
        return f"{owner.__name__}.send_remote/pending_remote/watch"
    return None


def inbox(persistence: PostgresPersistence) -> Any:
    """The store's cross-host inbox: its ``inbox``, or the store itself in older trees."""
    return getattr(persistence, "inbox", persistence)


def notify_floor(dsn: str, count: int) -> list[float]:
    """Raw LISTEN/NOTIFY: from ``pg_notify`` sent on one connection to its receipt on another."""
    times = []
    with (
        psycopg.connect(dsn, autocommit=True) as listener,
        psycopg.connect(dsn, autocommit=True) as sender,
    ):
        listener.execute("LISTEN bench_delivery")
        for i in range(count):
            start = time.perf_counter()
            sender.execute("SELECT pg_notify('bench_delivery', %s)", (str(i),))
            got = list(listener.notifies(timeout=5.0, stop_after=1))
            times.append(time.perf_counter() - start)
            assert got and got[0].payload == str(i), got
    return times


async def measure_delivery(dsn: str, schema: str, count: int) -> dict[str, list[float]]:
    """Host B sends ``count`` messages, one at a time, to a session host A holds.

    (Imports ``host.sessions.remote`` here: the module is absent from trees without the API.)

    Two ``PostgresPersistence`` objects stand for the two hosts (one process, one event loop).
    A runs what ``host.agents.remote.RemoteReceiver`` runs on a wake-up: ``pending_remote``,
    then the durable acceptance (an ``InboxAccepted`` appended by its writer, which also drops
    the queued row). Times from the start of ``send_remote`` to: its return (queued + NOTIFY
    committed), A's wake-up on its event loop, the acceptance committed.
    """
    from host.sessions.remote import QUEUED_PREFIX, RemoteMessage

    receiving = PostgresPersistence(dsn, schema=schema)
    sending = PostgresPersistence(dsn, schema=schema)
    receiver, sender = inbox(receiving), inbox(sending)
    loop = asyncio.get_running_loop()
    woken = asyncio.Event()

    def wake_up() -> None:  # called from the listener thread
        loop.call_soon_threadsafe(woken.set)

    stop = receiver.watch(wake_up)
    header = SessionHeader(id="delivery-target", created_at=1)
    writer = receiving.open_writer(header, create=True)
    waiting: dict[str, asyncio.Future[tuple[float, float]]] = {}

    async def receive() -> None:
        while True:
            await woken.wait()
            woken.clear()
            wake = time.perf_counter()
            for message in await receiver.pending_remote():
                if message.session_id != header.id or message.orphan:
                    continue
                accepted = InboxAccepted(
                    message.message_id, message.delivery, message.content, message.source
                )
                writer.append([Event(writer.next_seq, accepted)])
                future = waiting.pop(message.message_id, None)
                if future is not None and not future.done():
                    future.set_result((wake, time.perf_counter()))

    out: dict[str, list[float]] = {"sent": [], "woken": [], "delivered": []}
    try:
        await asyncio.wait_for(woken.wait(), 10)  # the listener's first (catch-up) wake
        task = asyncio.create_task(receive())
        for i in range(count):
            message_id = f"{QUEUED_PREFIX}bench{i}"  # what a sender makes: accepted once
            arrived = waiting[message_id] = loop.create_future()
            start = time.perf_counter()
            queued = await sender.send_remote(
                RemoteMessage(
                    message_id=message_id,
                    session_id=header.id,
                    delivery="followup",
                    content="please continue with the next file " * 3,
                    source=None,
                    sender_session=None,
                ),
                None,  # sent on behalf of no session: nothing to fence
            )
            sent = time.perf_counter()
            assert queued, "the target was not held by another host"
            wake, done = await asyncio.wait_for(arrived, 10)  # may be set before send returns
            out["sent"].append(sent - start)
            out["woken"].append(wake - start)
            out["delivered"].append(done - start)
        task.cancel()
        left = await sender.pending_remote() + await receiver.pending_remote()
        assert not left, f"{len(left)} messages still queued"
        assert writer.next_seq == count, writer.next_seq
    finally:
        stop()
        writer.close()
        receiving.close()
        sending.close()
    return out


def bench_delivery(dsn: str, schema: str, count: int) -> None:
    """Cross-host delivery latency p50/p99 over the NOTIFY path, and its raw NOTIFY floor.

    Measured only when the persistence has the ``RemoteInbox`` API; without it (or when it
    fails) nothing is faked.
    """
    floor = notify_floor(dsn, count)
    print(
        f"NOTIFY floor ({count} pg_notify -> receipt on another connection): "
        f"p50 {percentile(floor, 0.5) * 1e3:.2f} ms, p99 {percentile(floor, 0.99) * 1e3:.2f} ms"
    )
    if delivery_api() is None:
        print("delivery: not measured (not available)")
        return
    try:
        times = asyncio.run(measure_delivery(dsn, schema, count))
    except Exception as exc:  # an API still moving: say so rather than print numbers
        print(f"delivery: not measured (the API failed: {type(exc).__name__}: {exc})")
        return
    print(f"cross-host delivery ({count} messages, one in flight; ms from send_remote's start)")
    print(f"  {'until':<44} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7}")
    labels = {
        "sent": "send_remote returns (queued, NOTIFY committed)",
        "woken": "receiving host woken on its event loop",
        "delivered": "acceptance appended on the receiving host",
    }
    for key, label in labels.items():
        values = times[key]
        print(
            f"  {label:<44} {percentile(values, 0.5) * 1e3:>7.2f} "
            f"{percentile(values, 0.99) * 1e3:>7.2f} {max(values) * 1e3:>7.2f}"
        )
