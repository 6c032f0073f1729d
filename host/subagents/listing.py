"""``list_children`` and ``list_descendants``: the durable subagent catalog (docs/subagents.md).

Both enumerate the corpus once — the live store's headers merged with ``persistence.list()``,
live winning by id — and judge each candidate (``origin == "subagent"``) by the identity rule
of ``host.subagents.identity``:

* a **live** child answers from its live projection (never read from storage);
* a **settled** child answers from the identity index when its row is trusted, else from
  exactly one ``persistence.inspect`` (at most ``concurrency`` at a time), whose verdict is
  written back to the index.

Outcomes per candidate: an identity → ``ChildEntry`` (``running`` when live in the store, else
``inactive``, plus the ``lease_status`` a backend with leases reports for it in one query for
all candidates: another host may hold it; provider registration plays no part);
``corrupt``/``unsupported`` → a ``DiagnosticEntry`` (never showing descriptor content); a failed
inspection (``NOT_FOUND``, ``LOCKED``, ``PERSISTENCE_FAILED``, ``OSError``) → one
``unavailable`` diagnostic, not cached, so the next listing tries again; an inspection reporting
``CORRUPT``, or returning a header other than the enumerated one, → ``corrupt``; a live child
with no own descriptor yet → no entry.

Whole-call failures: no session store → ``SUBAGENT_CONTROL_SESSION_STORE_UNAVAILABLE``, no
projections service → ``SUBAGENT_CONTROL_PROJECTIONS_UNAVAILABLE`` (checked in that order,
before any work, even when there would be no children); a failing ``persistence.list()`` →
``SubagentError("UNAVAILABLE")`` chained to the ``PersistenceError``; a ``signal`` set before or
after any await → ``SubagentError("CANCELLED")``, never a partial result.

**Descendants.** The tree is every session reachable from the root through
``parent_session`` links, walked in stable pre-order (siblings by ``created_at`` then id) with an
explicit stack and a visited set, so cycles end and depth is unbounded. Every session is walked
through — ordinary forks, one-shot children, diagnosed children — but only subagent candidates
produce entries. ``depth`` is the lineage distance from the root, ordinary sessions included, so
``depth == 1`` exactly when ``parent_id`` is the root (the only rows ``send_message`` accepts);
``parent_id`` is the durable direct parent, which may be an ordinary session that is not listed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol

import attrs

from host.cancel import CancelSignal, cancelled
from host.errors import HostError
from host.sessions.model import Event, SessionHeader
from host.sessions.persistence import PersistenceError, SessionPersistence
from host.sessions.projections import ProjectionError, ProjectionUnit, fold_events
from host.sessions.remote import SharedPersistence
from host.sessions.store import SessionError
from host.subagents.entries import (
    Activity,
    ChildEntry,
    DiagnosticEntry,
    LeaseStatus,
    SubagentListEntry,
)
from host.subagents.errors import SubagentError
from host.subagents.identity import (
    IDENTITY_KEY,
    IDENTITY_UNIT,
    Identity,
    IdentityProblem,
    IdentityVerdict,
    identity_verdict,
)
from host.subagents.index import IdentityIndex
from host.subagents.types import ORIGIN

DEFAULT_CONCURRENCY = 8


class LiveSession(Protocol):
    """What listing reads from a live session: its header, events and projections."""

    @property
    def header(self) -> SessionHeader:
        """The immutable header."""
        ...

    @property
    def events(self) -> Sequence[Event]:
        """Every event of the session."""
        ...

    def projection(self, key: str) -> object:
        """The live folded state of unit ``key``."""
        ...


class LiveStore(Protocol):
    """The part of the session store listing needs (``host.sessions.store.SessionStore``)."""

    def get(self, session_id: str) -> Any:
        """The live session with that id (a ``LiveSession``), or ``None``."""
        ...

    def list(self) -> list[SessionHeader]:
        """Headers of the live sessions."""
        ...


class UnitRegistry(Protocol):
    """The part of the projections service listing needs."""

    def get(self, key: str) -> ProjectionUnit[Any] | None:
        """The unit registered under ``key``, if any."""
        ...


@attrs.frozen
class _Unavailable:
    """An inspection failed; reported as ``unavailable`` and never cached."""


_UNAVAILABLE = _Unavailable()
_NO_LIVE_UNIT = frozenset({ProjectionError.UNKNOWN_PROJECTION, SessionError.NOT_LIVE})
_Resolved = IdentityVerdict | _Unavailable
_LEASE_STATUSES: dict[str, LeaseStatus] = {"running": "running", "idle": "idle"}


def _check_cancel(signal: CancelSignal | None) -> None:
    if cancelled(signal):
        raise SubagentError("CANCELLED", signal.reason or "listing was cancelled")


def _is_candidate(header: SessionHeader) -> bool:
    return header.origin == ORIGIN


class SubagentListing:
    """Listing over the given services; ``None`` means the service is absent (see module doc).

    Cheap to build: the subagent service may make one per call from its current services.
    """

    def __init__(
        self,
        *,
        sessions: LiveStore | None,
        projections: UnitRegistry | None,
        persistence: SessionPersistence | None = None,
        index: IdentityIndex | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
    ) -> None:
        self.sessions = sessions
        self.projections = projections
        self.persistence = persistence
        self.index = index
        self.concurrency = max(1, concurrency)

    async def list_children(
        self, parent_id: str, *, signal: CancelSignal | None = None
    ) -> list[SubagentListEntry]:
        """The direct subagent children of ``parent_id``, by ``created_at`` then id."""
        sessions, unit = self._require()
        _check_cancel(signal)
        corpus = await self._enumerate(sessions, signal)
        candidates = sorted(
            (h for h in corpus.values() if h.parent_session == parent_id and _is_candidate(h)),
            key=SessionHeader.sort_key,
        )
        verdicts, live = await self._resolve(sessions, unit, candidates, signal)
        leased = await self._lease_statuses(candidates, verdicts, live, signal)
        _check_cancel(signal)
        return [
            entry
            for header in candidates
            if (entry := _entry(header, verdicts[header.id], header.id in live, leased)) is not None
        ]

    async def list_descendants(
        self, root_id: str, *, signal: CancelSignal | None = None
    ) -> list[SubagentListEntry]:
        """Every subagent below ``root_id``, in stable pre-order, with ``parent_id``/``depth``."""
        sessions, unit = self._require()
        _check_cancel(signal)
        corpus = await self._enumerate(sessions, signal)
        walk = list(_pre_order(root_id, corpus.values()))
        candidates = [header for header, _depth in walk if _is_candidate(header)]
        verdicts, live = await self._resolve(sessions, unit, candidates, signal)
        leased = await self._lease_statuses(candidates, verdicts, live, signal)
        _check_cancel(signal)
        out: list[SubagentListEntry] = []
        for header, depth in walk:
            if not _is_candidate(header):
                continue
            entry = _entry(header, verdicts[header.id], header.id in live, leased, depth)
            if entry is not None:
                out.append(entry)
        return out

    # -- services and corpus ---------------------------------------------------------------

    def _require(self) -> tuple[LiveStore, ProjectionUnit[Any]]:
        if self.sessions is None:
            raise SubagentError(
                "SUBAGENT_CONTROL_SESSION_STORE_UNAVAILABLE",
                "listing subagents requires the sessions service",
            )
        if self.projections is None:
            raise SubagentError(
                "SUBAGENT_CONTROL_PROJECTIONS_UNAVAILABLE",
                "listing subagents requires the projections service",
            )
        unit = self.projections.get(IDENTITY_KEY)
        return self.sessions, unit if unit is not None else IDENTITY_UNIT

    async def _enumerate(
        self, sessions: LiveStore, signal: CancelSignal | None
    ) -> dict[str, SessionHeader]:
        """Every known header by id: persisted ones, overridden by live ones."""
        corpus: dict[str, SessionHeader] = {}
        if self.persistence is not None:
            try:
                stored = await self.persistence.list(signal=signal)
            except PersistenceError as exc:
                _check_cancel(signal)
                if exc.code == PersistenceError.CANCELLED:
                    raise SubagentError("CANCELLED", exc.message) from exc
                raise SubagentError(
                    "UNAVAILABLE", f"cannot list stored sessions: {exc.message}"
                ) from exc
            _check_cancel(signal)
            corpus = {header.id: header for header in stored}
        for header in sessions.list():
            corpus[header.id] = header
        return corpus

    async def _lease_statuses(
        self,
        candidates: Sequence[SessionHeader],
        verdicts: dict[str, _Resolved],
        live: set[str],
        signal: CancelSignal | None,
    ) -> dict[str, str]:
        """Lease status of the listed children not live here: one query, if leases exist.

        A failing query leaves every status unknown (no lease shown); the listing stands.
        """
        _check_cancel(signal)
        persistence = self.persistence
        residency = (
            persistence.inbox.residency if isinstance(persistence, SharedPersistence) else None
        )
        ids = [
            h.id
            for h in candidates
            if h.id not in live and isinstance(verdicts.get(h.id), Identity)
        ]
        if residency is None or not ids:
            return {}
        try:
            statuses: dict[str, str] = await residency(ids, signal=signal)
        except PersistenceError:
            return {}
        return statuses

    # -- verdicts --------------------------------------------------------------------------

    async def _resolve(
        self,
        sessions: LiveStore,
        unit: ProjectionUnit[Any],
        candidates: Sequence[SessionHeader],
        signal: CancelSignal | None,
    ) -> tuple[dict[str, _Resolved], set[str]]:
        """A verdict for every candidate, and the ids of those that are live."""
        verdicts: dict[str, _Resolved] = {}
        live: set[str] = set()
        cold: list[SessionHeader] = []
        index = self.index if unit is IDENTITY_UNIT else None  # rows encode this unit only
        if index is not None:
            index.refresh()
        for header in candidates:
            session = sessions.get(header.id)
            if session is not None:
                live.add(header.id)
                verdicts[header.id] = self._live_verdict(session, header, unit, index)
                continue
            known = index.lookup(header, refresh=False) if index is not None else None
            if known is not None:
                verdicts[header.id] = known
            else:
                cold.append(header)
        if cold:
            await self._inspect_all(unit, index, cold, verdicts, signal)
        return verdicts, live

    def _live_verdict(
        self,
        session: LiveSession,
        header: SessionHeader,
        unit: ProjectionUnit[Any],
        index: IdentityIndex | None,
    ) -> IdentityVerdict:
        """From the live projection: a memory read (a memory fold if the unit is unregistered)."""
        state: object
        try:
            state = session.projection(IDENTITY_KEY)
        except HostError as exc:
            no_unit = exc.code in _NO_LIVE_UNIT  # the store lacks the unit: fold in memory
            state = fold_events(unit, session.events) if no_unit else None
        except Exception:
            state = None  # a failing projection is this child's problem only: corrupt
        verdict = identity_verdict(state, header, live=True)
        if (
            verdict is not None
            and index is not None
            and index.lookup(header, refresh=False) is None
        ):
            index.store(header, verdict)
        return verdict

    async def _inspect_all(
        self,
        unit: ProjectionUnit[Any],
        index: IdentityIndex | None,
        cold: Sequence[SessionHeader],
        verdicts: dict[str, _Resolved],
        signal: CancelSignal | None,
    ) -> None:
        """Inspect each cold candidate once, ``concurrency`` at a time; stop early on cancel."""
        pending: Iterator[SessionHeader] = iter(cold)

        async def worker() -> None:
            for header in pending:
                if cancelled(signal):
                    return
                verdicts[header.id] = await self._inspect(unit, index, header, signal)

        workers = min(self.concurrency, len(cold))
        try:
            async with asyncio.TaskGroup() as group:
                for _ in range(workers):
                    group.create_task(worker())
        except BaseExceptionGroup as failures:
            raise failures.exceptions[0] from None

    async def _inspect(
        self,
        unit: ProjectionUnit[Any],
        index: IdentityIndex | None,
        header: SessionHeader,
        signal: CancelSignal | None,
    ) -> _Resolved:
        """One cold read of ``header``'s session and its verdict (written back to the index)."""
        assert self.persistence is not None  # cold candidates come from persistence
        try:
            stored = await self.persistence.inspect(header.id, signal=signal)
        except PersistenceError as exc:
            if exc.code == PersistenceError.CANCELLED:
                return _UNAVAILABLE  # the caller raises CANCELLED after the batch
            if exc.code == PersistenceError.CORRUPT:
                return IdentityProblem("corrupt", None, "stored log is unusable")
            return _UNAVAILABLE
        except OSError:
            return _UNAVAILABLE
        if stored.header != header:
            return IdentityProblem("corrupt", None, "stored header differs from the listed one")
        verdict = identity_verdict(fold_events(unit, stored.events), header, live=False)
        if index is not None and verdict is not None:
            index.store(header, verdict)
        return verdict


def _entry(
    header: SessionHeader,
    verdict: _Resolved,
    live: bool,
    leased: dict[str, str],
    depth: int | None = None,
) -> SubagentListEntry | None:
    """The entry of one candidate; ``depth`` given (descendants) adds ``parent_id``/``depth``.

    ``leased`` maps ids to lease statuses (``_lease_statuses``).
    """
    if verdict is None:
        return None
    parent = header.parent_session if depth is not None else None
    if isinstance(verdict, _Unavailable):
        return DiagnosticEntry(header.id, "unavailable", parent, depth)
    if isinstance(verdict, IdentityProblem):
        return DiagnosticEntry(header.id, verdict.reason, parent, depth)
    assert isinstance(verdict, Identity)
    activity: Activity = "running" if live else "inactive"
    lease_status = _LEASE_STATUSES.get(leased.get(header.id, ""))
    return ChildEntry(
        header.id, verdict.mode, activity, verdict.label, parent, depth, lease_status=lease_status
    )


def _pre_order(
    root_id: str, headers: Iterable[SessionHeader]
) -> Iterator[tuple[SessionHeader, int]]:
    """Every session below ``root_id`` with its depth, in stable pre-order, cycle-safe."""
    children: dict[str, list[SessionHeader]] = {}
    for header in headers:
        if header.parent_session is not None:
            children.setdefault(header.parent_session, []).append(header)
    for siblings in children.values():
        siblings.sort(key=SessionHeader.sort_key, reverse=True)  # popped smallest first
    visited = {root_id}
    stack: list[tuple[SessionHeader, int]] = [(h, 1) for h in children.get(root_id, ())]
    while stack:
        header, depth = stack.pop()
        if header.id in visited:
            continue
        visited.add(header.id)
        yield header, depth
        stack.extend((child, depth + 1) for child in children.get(header.id, ()))
