"""Loading a stored session to continue it: the backend hands over data, the runtime closes
a turn left open.

A backend's ``SessionPersistence.resume`` takes the session's lock, reads the log and hands
over its events as stored (a JSONL torn tail cut off: storage repair is the backend's) with
the writer that holds the lock. A log that ends inside a turn was cut off mid-turn (a crash,
a killed host), and the runtime's rule is that such a turn is over: before anyone continues
the session, its writer appends ``TurnEnd(stop_reason="interrupted")`` and commits it durably.
That rule is written here once, for every backend; ``StoredSession.closed_turn`` names the
turn it closed.
"""

from __future__ import annotations

import attrs

from host.cancel import CancelSignal
from host.sessions import workers
from host.sessions.model import Event, TurnEnd
from host.sessions.persistence import Resumed, SessionPersistence, StoredSession

__all__ = ["load", "resume"]


async def resume(
    persistence: SessionPersistence, session_id: str, *, signal: CancelSignal | None = None
) -> Resumed:
    """``persistence.resume``, then close a turn left open (module docstring) with the writer
    it returned. Same errors; a failure or a cancelled caller leaves the lock released."""
    resumed = await persistence.resume(session_id, signal=signal)
    turn = resumed.stored.open_turn
    if turn is None:
        return resumed
    return await workers.resume(_close_open_turn, resumed, turn)


async def load(
    persistence: SessionPersistence, session_id: str, *, signal: CancelSignal | None = None
) -> StoredSession:
    """``resume`` and release the lock at once: the stored session, repaired."""
    resumed = await resume(persistence, session_id, signal=signal)
    resumed.writer.close()
    return resumed.stored


def _close_open_turn(resumed: Resumed, turn: str) -> Resumed:
    """Append and durably commit the ``TurnEnd`` of the open ``turn`` (on a worker thread: the
    commit may sync a file or wait for a database); the writer is closed if that fails."""
    stored, writer = resumed.stored, resumed.writer
    closing = Event(len(stored.events), TurnEnd(turn_id=turn, stop_reason="interrupted"))
    try:
        writer.append([closing])
        writer.commit(durable=True)
    except BaseException:
        writer.close()
        raise
    events = (*stored.events, closing)
    return Resumed(attrs.evolve(stored, events=events, closed_turn=turn), writer)
