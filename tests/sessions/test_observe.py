"""``SessionStore.observe``: every acknowledged append of a live session, published or resumed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from host.sessions.jsonl import JsonlPersistence
from host.sessions.model import Event, SessionHeader, TurnStart
from host.sessions.store import Session, SessionStore
from tests.support import user


async def test_observers_see_appends_of_published_and_resumed_sessions(tmp_path: Path) -> None:
    store = SessionStore(JsonlPersistence(tmp_path), None)
    seen: list[tuple[str, list[int]]] = []

    def observer(session: Session, events: Sequence[Event]) -> None:
        seen.append((session.id, [event.seq for event in events]))

    stop = store.observe(observer)
    unpublished = store.new(SessionHeader(id="s1"), seed=[user("seed")])
    unpublished.append(user("before publishing"))
    assert seen == []  # nothing is live yet
    store.publish(unpublished)
    unpublished.append_all([TurnStart(turn_id="t"), user("hi")])
    store.release("s1")
    resumed = await store.resume("s1")
    assert len(resumed.events) == 5  # loading closed the open turn (seq 4), unobserved
    resumed.append(user("again"))
    assert seen == [("s1", [2, 3]), ("s1", [5])]
    stop()
    stop()  # idempotent
    resumed.append(user("unobserved"))
    assert seen == [("s1", [2, 3]), ("s1", [5])]


def test_a_raising_observer_is_logged_and_the_append_stands(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = SessionStore(JsonlPersistence(tmp_path), None)
    later: list[int] = []

    def broken(session: Session, events: Sequence[Event]) -> None:
        raise RuntimeError("observer bug")

    store.observe(broken)
    store.observe(lambda session, events: later.extend(e.seq for e in events))
    session = store.new(SessionHeader(id="s2"))
    store.publish(session)
    event = session.append(user("kept"))
    assert event.seq == 0 and len(session.events) == 1
    assert later == [0]
    assert "append observer of session s2 failed" in caplog.text
