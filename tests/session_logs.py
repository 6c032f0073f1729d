"""Building session logs for persistence tests: turns of events, and sessions stored whole."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from host.sessions.model import Event, EventBody, MessageEvent, SessionHeader, TurnEnd, TurnStart


def turn_bodies(turn_id: str = "t1", n_messages: int = 2, close: bool = True) -> list[EventBody]:
    """A turn: start, ``n_messages`` assistant messages, and (when ``close``) its end."""
    out: list[EventBody] = [TurnStart(turn_id=turn_id)]
    out += [MessageEvent(role="assistant", content=f"m{i}") for i in range(n_messages)]
    if close:
        out.append(TurnEnd(turn_id=turn_id, stop_reason="completed"))
    return out


def as_events(bodies: Sequence[EventBody], start: int = 0) -> list[Event]:
    """``bodies`` numbered from ``start``."""
    return [Event(start + i, body) for i, body in enumerate(bodies)]


def write_session(
    persistence: Any, session_id: str, bodies: Sequence[EventBody], **kw: Any
) -> SessionHeader:
    """Store a session with these events and close its writer."""
    header = SessionHeader(id=session_id, **kw)
    persistence.open_writer(header, create=True, events=as_events(bodies)).close()
    return header
