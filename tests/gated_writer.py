"""A ``QueuedWriter`` for tests: the real JSONL writer behind a gate, so a test decides when
each queued append is committed (on a background thread, as the PostgreSQL committer does)."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from host.sessions.jsonl import JsonlPersistence
from host.sessions.model import Event, SessionHeader
from host.sessions.persistence import PersistenceError, SessionWriter


class GatedWriter:
    """A ``QueuedWriter`` over a real writer: each ``step`` writes (or fails) the oldest
    queued append on a background thread (one, so in order) while the loop runs. Held (the
    default), appends wait for a ``step``; let go, each is written as it is submitted."""

    def __init__(self, inner: SessionWriter, *, held: bool = True) -> None:
        self.inner = inner
        self.queue: deque[tuple[list[Event], Future[None]]] = deque()
        self.session_id = inner.session_id
        self.held = held
        self._thread = ThreadPoolExecutor(max_workers=1)

    def submit(self, events: Sequence[Event]) -> Future[None]:
        future: Future[None] = Future()
        self.queue.append((list(events), future))
        if not self.held:
            self.step()
        return future

    def hold(self) -> None:
        """From now on appends wait for ``step``."""
        self.held = True

    def let_go(self, first_fails: PersistenceError | None = None) -> None:
        """Write what waits (the oldest failing with ``first_fails``, if given), and every
        later append as it comes."""
        self.held = False
        if first_fails is not None:
            self.step(first_fails)
        while self.queue:
            self.step()

    def append(self, events: Sequence[Event]) -> None:
        self.submit(events).result()

    def step(self, error: PersistenceError | None = None) -> Future[None]:
        """Write (or fail with ``error``) the oldest queued append; the future of that work."""
        events, future = self.queue.popleft()

        def write() -> None:
            try:
                if error is not None:
                    raise error
                self.inner.append(events)
            except PersistenceError as exc:
                future.set_exception(exc)
            else:
                future.set_result(None)

        return self._thread.submit(write)

    def commit(self, durable: bool = False) -> None:
        self.inner.commit(durable)

    def close(self) -> None:
        self._thread.shutdown()
        self.inner.close()


class GatedPersistence(JsonlPersistence):
    """JSONL persistence whose writers are gated (``GatedWriter``, held or not), listed in
    ``writers``."""

    def __init__(self, directory: Path, *, held: bool = True) -> None:
        super().__init__(directory)
        self.held = held
        self.writers: list[GatedWriter] = []

    def open_writer(self, header: SessionHeader, **kwargs: Any) -> GatedWriter:  # type: ignore[override]
        return self._gated(super().open_writer(header, **kwargs))

    async def create_async(  # type: ignore[override]
        self, header: SessionHeader, events: Sequence[Event] = ()
    ) -> GatedWriter:
        return self._gated(await super().create_async(header, events))

    def _gated(self, inner: SessionWriter) -> GatedWriter:
        writer = GatedWriter(inner, held=self.held)
        self.writers.append(writer)
        return writer
