"""RemoteSender's orphan retries: a growing delay, none once the sender was taken over, and no
memory of messages gone elsewhere; the receiver hands orphans to the manager registered last."""

from __future__ import annotations

import asyncio
import contextlib
from types import SimpleNamespace
from typing import Any

import pytest

from host.agents.remote import RemoteReceiver
from host.errors import HostError
from host.sessions.persistence import Voice
from host.sessions.remote import RemoteMessage
from host.subagents import remote
from host.subagents.remote import MAX_RETRY_DELAY, RemoteSender


class Manager:
    """What ``deliver_orphan`` uses of the continuation manager: live agents and followup."""

    def __init__(self, voice: Voice | None = None) -> None:
        session = SimpleNamespace(voice=lambda: voice)
        self.agents = {"parent": SimpleNamespace(closed=False, session=session)}
        self.attempts: list[str] = []
        self.fail = True

    async def followup(self, parent: Any, session_id: str, content: str, **kw: Any) -> str:
        self.attempts.append(kw["message_id"])
        if self.fail:
            raise HostError("NOT_FOUND", "cannot resume")
        return str(kw["message_id"])


def orphan(message_id: str) -> RemoteMessage:
    return RemoteMessage(message_id, "child", "followup", "hi", None, "parent", orphan=True)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [1000.0]
    monkeypatch.setattr(remote, "time", SimpleNamespace(monotonic=lambda: now[0]))
    return now


async def attempt(sender: RemoteSender, manager: Manager, message_id: str) -> bool:
    """Offer the orphan once; True when the sender tried to deliver it."""
    before = len(manager.attempts)
    with contextlib.suppress(HostError):
        await sender.deliver_orphan(orphan(message_id))
    return len(manager.attempts) > before


async def test_failed_orphans_wait_a_doubling_delay(clock: list[float]) -> None:
    manager = Manager()
    sender = RemoteSender(manager, inbox=None)  # type: ignore[arg-type]
    tried = []
    for at in (0.0, 0.5, 1.1, 2.5, 3.2, 7.0, 7.3):  # failures wait 1 s, 2 s, 4 s
        clock[0] = 1000.0 + at
        tried.append(await attempt(sender, manager, "rmsg_a"))
    assert tried == [True, False, True, False, True, False, True]
    manager.fail = False
    clock[0] += 20.0
    assert await attempt(sender, manager, "rmsg_a")
    assert sender._backoff == {}  # delivered: forgotten


async def test_a_message_no_longer_queued_is_forgotten(clock: list[float]) -> None:
    """Delivered by another host meanwhile: no pass comes back to it, and its delay goes."""
    manager = Manager()
    sender = RemoteSender(manager, inbox=None)  # type: ignore[arg-type]
    assert await attempt(sender, manager, "rmsg_gone")
    assert set(sender._backoff) == {"rmsg_gone"}
    clock[0] += 2 * MAX_RETRY_DELAY + 2
    assert await attempt(sender, manager, "rmsg_other")
    assert set(sender._backoff) == {"rmsg_other"}


async def test_an_orphan_of_a_sender_taken_over_is_dropped_then_forgotten(
    clock: list[float],
) -> None:
    """Another host took the sender over: no attempt, now or at later passes; once no pass
    comes back to the message, it is forgotten."""
    manager = Manager(Voice("parent", lambda: False))
    sender = RemoteSender(manager, inbox=None)  # type: ignore[arg-type]
    assert not await attempt(sender, manager, "rmsg_lost")
    clock[0] += MAX_RETRY_DELAY
    assert not await attempt(sender, manager, "rmsg_lost")
    assert set(sender._dropped) == {"rmsg_lost"}
    clock[0] += 2 * MAX_RETRY_DELAY + 2
    await attempt(sender, manager, "rmsg_other")
    assert set(sender._dropped) == {"rmsg_other"}


class Queue:
    """A backend's cross-host queue holding one orphan (what the receiver reads of it)."""

    async def pending_remote(self) -> list[RemoteMessage]:
        return [orphan("rmsg_o")]


async def test_a_replaced_orphan_handler_stays_when_the_old_manager_lets_go() -> None:
    """A continuation manager built for the registry after another (``agents`` replaced)
    takes the orphans over; the old one's shutdown does not take them from it."""
    receiver = RemoteReceiver(SimpleNamespace(get=lambda _: None), Queue())  # type: ignore[arg-type]
    got: list[str] = []

    async def old(message: RemoteMessage) -> None:
        got.append("old")

    async def new(message: RemoteMessage) -> None:
        got.append("new")

    stop_old = receiver.on_orphan(old)
    stop_new = receiver.on_orphan(new)
    stop_old()
    receiver.wake()
    await asyncio.sleep(0)
    assert got == ["new"]
    stop_new()
    receiver.wake()
    await asyncio.sleep(0)
    assert got == ["new"]
