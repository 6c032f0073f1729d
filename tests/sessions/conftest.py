"""Shared fixtures for the sessions tests: a data directory inside a sandbox and helpers."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from host.sessions.jsonl import JsonlPersistence
from host.sessions.model import Event, EventBody, MessageEvent, SessionHeader, TurnEnd, TurnStart
from tests.fixtures import persistence  # noqa: F401 - JSONL persistence over data_dir


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    """A directory whose only child is ``data`` (so writes outside data_dir are visible)."""
    root = tmp_path / "sandbox"
    root.mkdir()
    return root


@pytest.fixture
def data_dir(sandbox: Path) -> Path:
    """The data directory, not yet created (overrides ``tests.fixtures.data_dir``)."""
    return sandbox / "data"


def turn_bodies(turn_id: str = "t1", n_messages: int = 2, close: bool = True) -> list[EventBody]:
    out: list[EventBody] = [TurnStart(turn_id=turn_id)]
    out += [MessageEvent(role="assistant", content=f"m{i}") for i in range(n_messages)]
    if close:
        out.append(TurnEnd(turn_id=turn_id, stop_reason="completed"))
    return out


def as_events(bodies: Sequence[EventBody], start: int = 0) -> list[Event]:
    return [Event(start + i, body) for i, body in enumerate(bodies)]


def write_session(
    persistence: JsonlPersistence,  # noqa: F811 - the fixture of that name, when passed
    session_id: str,
    bodies: Sequence[EventBody],
    **kw: object,
) -> SessionHeader:
    """Store a session with these events and close its writer."""
    header = SessionHeader(id=session_id, **kw)  # type: ignore[arg-type]
    persistence.open_writer(header, create=True, events=as_events(bodies)).close()
    return header
