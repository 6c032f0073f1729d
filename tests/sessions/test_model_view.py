"""The incrementally maintained model view equals a full scan of the log, whatever is appended."""

from __future__ import annotations

import random

from host.sessions.model import (
    Compaction,
    Event,
    EventBody,
    MessageEvent,
    PluginEvent,
    SessionHeader,
    TurnStart,
)
from host.sessions.store import Session


def reference(events: list[Event]) -> list[MessageEvent]:
    """The original O(events) definition of ``Session.model_messages``."""
    start = 0
    out: list[MessageEvent] = []
    for event in reversed(events):
        body = event.body
        if isinstance(body, Compaction):
            out.append(
                MessageEvent(
                    role="user",
                    content=body.summary,
                    message_id=f"compaction-{event.seq}",
                    source={"kind": "compaction", "through_seq": body.through_seq},
                )
            )
            start = body.through_seq + 1
            break
    out.extend(e.body for e in events[max(start, 0) :] if isinstance(e.body, MessageEvent))
    return out


def random_body(rng: random.Random, length: int) -> EventBody:
    pick = rng.random()
    if pick < 0.55:
        return MessageEvent(role=rng.choice(["user", "assistant", "tool"]), content=str(length))
    if pick < 0.7:
        return TurnStart(turn_id=f"t{length}")
    if pick < 0.8:
        return PluginEvent(plugin="p", type="p/x")
    # usually "everything so far", sometimes behind, ahead or negative
    through = rng.choice([length - 1, length - 1, rng.randint(-3, length + 5)])
    return Compaction(summary=f"s{length}", through_seq=through)


def test_incremental_view_matches_full_scan() -> None:
    rng = random.Random(7)
    for trial in range(60):
        seed = [random_body(rng, i) for i in range(rng.randint(0, 15))]
        session = Session(
            SessionHeader(id=f"s{trial}"), [Event(i, b) for i, b in enumerate(seed)], None
        )
        assert session.model_messages() == reference(list(session.events))
        for _ in range(rng.randint(0, 40)):
            if rng.random() < 0.2:
                bodies = [random_body(rng, len(session.events) + k) for k in range(3)]
                session.append_all(bodies)
            else:
                session.append(random_body(rng, len(session.events)))
            assert session.model_messages() == reference(list(session.events))


def test_model_messages_returns_a_fresh_list() -> None:
    session = Session(SessionHeader(id="fresh"), [], None)
    session.append(MessageEvent(role="user", content="hi"))
    session.append(Compaction(summary="sum", through_seq=0))
    session.append(MessageEvent(role="user", content="again"))
    first = session.model_messages()
    first.clear()
    second = session.model_messages()
    assert [m.content for m in second] == ["sum", "again"]
    assert second[0] is not session.model_messages()[0]  # the summary is built per call
