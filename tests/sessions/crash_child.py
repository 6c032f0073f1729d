"""Child process for the crash and locking tests (run as a script, never imported by pytest).

Usage: ``crash_child.py DATA_DIR SESSION_ID MODE SEED [PAUSE]``

* ``MODE=append``: create the session (or ``load`` + reopen it), print ``ready``, then append
  events forever in turns of a few events; after each append returns print
  ``ack <seq> <kind> <ident>`` (and ``inbox <message_id>`` for accepted inbox messages).
  The parent SIGKILLs it at a random moment. With ``PAUSE``, after that many appends it prints
  ``paused`` and blocks on stdin, so the kill lands exactly there. The events depend only on
  ``SEED``: ``events(SEED)`` yields the same bodies in the same order.
* ``MODE=hold``: like ``append`` but one event per line read from stdin; stops at EOF.
* ``MODE=grab``: try to open a writer and to load; print the error codes.
"""

from __future__ import annotations

import asyncio
import random
import sys
from collections.abc import Iterator
from pathlib import Path

from host.sessions.jsonl import JsonlPersistence, JsonlWriter
from host.sessions.loading import load
from host.sessions.model import (
    Event,
    EventBody,
    InboxAccepted,
    MessageEvent,
    SessionHeader,
    TurnEnd,
    TurnStart,
)
from host.sessions.persistence import PersistenceError


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def open_session(persistence: JsonlPersistence, session_id: str) -> tuple[JsonlWriter, int]:
    if not persistence.path_for(session_id).exists():
        writer = persistence.open_writer(SessionHeader(id=session_id), create=True)
        return writer, 0
    stored = asyncio.run(load(persistence, session_id))
    return persistence.open_writer(stored.header, create=False), len(stored.events)


def ident(body: EventBody) -> str:
    if isinstance(body, TurnStart | TurnEnd):
        return body.turn_id
    if isinstance(body, MessageEvent | InboxAccepted):
        return body.message_id
    return "-"


def bodies(rng: random.Random, seed: int) -> list[EventBody]:
    """One turn: start, a few messages and inbox acceptances, end."""
    turn = f"t{seed}-{rng.randrange(1 << 30)}"
    out: list[EventBody] = [TurnStart(turn_id=turn)]
    for _ in range(rng.randint(1, 8)):
        if rng.random() < 0.3:
            out.append(
                InboxAccepted(
                    message_id=f"in{rng.randrange(1 << 40)}",
                    delivery="steer",
                    content="inbox " * rng.randint(1, 50),
                )
            )
        else:
            size = rng.choice((10, 100, 1000, 10000))
            out.append(MessageEvent(role="assistant", content="x" * size))
    out.append(TurnEnd(turn_id=turn, stop_reason="completed"))
    return out


def events(seed: int) -> Iterator[EventBody]:
    """The bodies an ``append`` child with this seed writes, in order, forever."""
    rng = random.Random(seed)
    while True:
        yield from bodies(rng, seed)


def write(writer: JsonlWriter, seq: int, body: EventBody) -> int:
    writer.append([Event(seq, body)])
    say(f"ack {seq} {body.kind} {ident(body)}")
    if isinstance(body, InboxAccepted):
        say(f"inbox {body.message_id}")
    if isinstance(body, TurnEnd):
        writer.commit(durable=True)
    return seq + 1


def main() -> None:
    data_dir, session_id, mode, seed = sys.argv[1:5]
    persistence = JsonlPersistence(Path(data_dir), fsync="turn")
    if mode == "grab":
        for attempt in ("writer", "load"):
            try:
                if attempt == "writer":
                    header = asyncio.run(persistence.inspect(session_id)).header
                    persistence.open_writer(header, create=False).close()
                else:
                    asyncio.run(load(persistence, session_id))
                say(f"{attempt} OK")
            except PersistenceError as exc:
                say(f"{attempt} {exc.code}")
        return
    writer, seq = open_session(persistence, session_id)
    say(f"ready {seq}")
    if mode == "hold":
        for _line in sys.stdin:
            seq = write(writer, seq, MessageEvent(role="user", content="held"))
        writer.close()
        return
    pause = int(sys.argv[5]) if len(sys.argv) > 5 else None
    for written, body in enumerate(events(int(seed)), start=1):
        seq = write(writer, seq, body)
        if written == pause:
            say("paused")
            sys.stdin.read()  # until the parent kills it


if __name__ == "__main__":
    main()
