"""The harness of the subagent tests (no tests here), at two levels over real JSONL files:

* ``Env``, a whole host: a ``HostHarness`` (``host.testing``: a real host of every built-in
  plugin, JSONL persistence in tmp_path, the scripted model); test tools (``tests.scenarios``)
  call the service the way the tool packages do. The ``env`` fixture (``tests/conftest.py``)
  makes one per test.
* ``World``, the store below the service: a real store and projections over ``Recording`` (the
  real persistence, counting ``inspect``/``list`` calls and failing chosen ones), which builds
  sessions directly: live or settled (released) subagent children, ordinary forks,
  fork-seeded children; ``listing()`` is the listing under test. The ``world`` fixture
  (``tests/subagents/conftest.py``) makes one per test.

Nothing is mocked and nothing waits on time: tests await child activations
(``ChildActivation``), turn ends and gates.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from host.agents import Agent, say
from host.cancel import CancelSignal
from host.sessions.jsonl import JsonlPersistence
from host.sessions.model import (
    Compaction,
    Event,
    EventBody,
    MessageEvent,
    SessionHeader,
    SubagentDescriptorEvent,
)
from host.sessions.persistence import PersistenceError, Resumed, StoredSession
from host.sessions.projections import Projections
from host.sessions.store import Session, SessionStore
from host.subagents.identity import IDENTITY_UNIT
from host.subagents.index import IdentityIndex
from host.subagents.listing import SubagentListing
from host.subagents.service import SubagentService
from host.subagents.types import ChildRequest
from host.testing import HostHarness, MakeHarness
from host.tools import Tool, ToolExec, tool
from tests.scenarios import Stubborn, TextArgs


def report_tool(delivery: str = "next-step") -> Tool:
    """A ``report`` tool like the report package's: reports ``text`` to the direct parent."""

    @tool("report", "Report to your parent.", TextArgs)
    async def run(args: TextArgs, exec: ToolExec) -> str:
        service: SubagentService = exec.ctx.subagents
        message_id = await service.report_from(exec.agent, args.text, delivery=delivery)  # type: ignore[arg-type]
        return f"report accepted as message {message_id}"

    return run


class Env(HostHarness):
    """A harness of the built-in plugins over ``data_dir``."""

    def __init__(self, data_dir: Path, environ: dict[str, str] | None = None) -> None:
        super().__init__(data_dir=data_dir, environ=environ)

    async def settled_child(self, label: str = "bg") -> tuple[Agent, str]:
        """A root and a continuable child (``label``) that answered once and settled."""
        root = await self.root()
        self.model.script(label, say("first"))
        started = await self.subagents.start_continuable(
            "spawn", ChildRequest("task"), parent=root, label=label
        )
        await self.settled(started.child_id, root)
        return root, started.child_id


def release_stubborn() -> None:
    """Release every ``Stubborn`` tool (never let a failed test hang the shutdown)."""
    for stubborn in Stubborn.made:
        stubborn.release.set()


def make_env(tmp_path: Path, make_harness: MakeHarness) -> Env:
    """An ``Env`` over ``tmp_path / "data"``, closed (and unstuck) after the test."""
    made = make_harness(cls=Env, data_dir=tmp_path / "data")
    assert isinstance(made, Env)
    made.on_close(release_stubborn)
    return made


def descriptor_seqs(events: Any) -> list[int]:
    return [e.seq for e in events if isinstance(e.body, SubagentDescriptorEvent)]


def continuable(label: str = "worker", provider: str = "spawn") -> dict[str, Any]:
    return {"version": 2, "mode": "continuable", "provider": provider, "label": label}


def one_shot(label: str | None = None, provider: str = "spawn") -> dict[str, Any]:
    data: dict[str, Any] = {"version": 2, "mode": "one-shot", "provider": provider}
    if label is not None:
        data["label"] = label
    return data


class Recording:
    """The real persistence, with call counting and optional injected failures."""

    def __init__(self, inner: JsonlPersistence) -> None:
        self.inner = inner
        self.inspects: Counter[str] = Counter()
        self.lists = 0
        self.fail_inspect: set[str] = set()
        self.fail_list = False
        self.on_inspect: Any = None

    def open_writer(
        self, header: SessionHeader, *, create: bool, events: Sequence[Event] = ()
    ) -> Any:
        return self.inner.open_writer(header, create=create, events=events)

    async def list(self, *, signal: CancelSignal | None = None) -> list[SessionHeader]:
        self.lists += 1
        if self.fail_list:
            raise PersistenceError(PersistenceError.PERSISTENCE_FAILED, "disk on fire")
        return await self.inner.list(signal=signal)

    async def inspect(
        self, session_id: str, *, signal: CancelSignal | None = None
    ) -> StoredSession:
        self.inspects[session_id] += 1
        if self.on_inspect is not None:
            self.on_inspect(session_id)
        if session_id in self.fail_inspect:
            raise PersistenceError(PersistenceError.PERSISTENCE_FAILED, "read failed")
        return await self.inner.inspect(session_id, signal=signal)

    async def resume(self, session_id: str, *, signal: CancelSignal | None = None) -> Resumed:
        return await self.inner.resume(session_id, signal=signal)

    @property
    def total_inspects(self) -> int:
        return sum(self.inspects.values())

    def reset(self) -> None:
        self.inspects.clear()
        self.lists = 0


class World:
    """A data directory with a real store; builds sessions and listings over it."""

    def __init__(self, root: Path) -> None:
        self.data_dir = root / "data"
        self.persistence = Recording(JsonlPersistence(self.data_dir, fsync="never"))
        self.projections = Projections()
        self.projections.register(IDENTITY_UNIT)
        self.store = SessionStore(self.persistence, self.projections)
        self.index_path = self.data_dir / ".index" / "identity.jsonl"
        self.index = IdentityIndex(self.index_path)
        self._clock = 1_000

    def tick(self) -> int:
        self._clock += 1_000
        return self._clock

    def listing(self, *, index: IdentityIndex | bool | None = True, **kw: Any) -> SubagentListing:
        """A listing over this world; ``index=False`` for none, ``True`` for the shared one."""
        chosen = self.index if index is True else (None if index is False else index)
        args: dict[str, Any] = {
            "sessions": self.store,
            "projections": self.projections,
            "persistence": self.persistence,
            "index": chosen,
        }
        args.update(kw)
        return SubagentListing(**args)

    def fresh_index(self) -> IdentityIndex:
        """A new index object over the same file (as another process would see it)."""
        return IdentityIndex(self.index_path)

    def root(self, session_id: str = "root", *, events: int = 1) -> Session:
        """A live ordinary session (a parent)."""
        session = self.store.new(SessionHeader(id=session_id, created_at=self.tick()))
        self.store.publish(session)
        for i in range(events):
            session.append(MessageEvent(role="user", content=f"hello {i}"))
        return session

    def child(
        self,
        session_id: str,
        parent: str,
        *,
        descriptors: Sequence[Any] = (None,),
        seed: Sequence[EventBody] = (),
        events: int = 2,
        live: bool = False,
        origin: str | None = "subagent",
        created_at: int | None = None,
        compact: bool = False,
        record: bool = True,
    ) -> SessionHeader:
        """A child session of ``parent``; each ``None`` descriptor is a default continuable one.

        Own events: the descriptors, then ``events`` messages (compacted if asked). With
        ``record`` every descriptor append is recorded in the shared index as the service
        would. Released (settled) unless ``live``.
        """
        header = SessionHeader(
            id=session_id,
            parent_session=parent,
            created_at=self.tick() if created_at is None else created_at,
            origin=origin,
            seed_length=len(seed),
        )
        session = self.store.new(header, seed=seed)
        self.store.publish(session)
        for raw in descriptors:
            value = continuable(session_id) if raw is None else raw
            event = session.append(SubagentDescriptorEvent(value))
            if record:
                self.index.record(header, value, event.seq)
        for i in range(events):
            session.append(MessageEvent(role="assistant", content=f"{session_id} says {i}"))
        if compact:
            session.append(Compaction(summary="so far", through_seq=len(session.events) - 1))
        if not live:
            self.store.release(session_id)
        return header

    def log_path(self, session_id: str) -> Path:
        return self.data_dir / f"{session_id}.jsonl"
