"""Property tests (hypothesis): descriptor parsing, JSONL recovery, the inbox.

The listing property (random trees with forks, live children, damaged files) lives in
``test_listing_property.py``. Example counts are modest by default and scale up in the slow
profile (``--slow`` / ``AGENT_HOST_SLOW=1``); every test has ``deadline=None``.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from host.sessions.jsonl import JsonlPersistence
from host.sessions.loading import load
from host.sessions.model import (
    Event,
    EventBody,
    InboxAccepted,
    InboxClaimed,
    MessageEvent,
    SessionHeader,
    SubagentDescriptorEvent,
    TurnEnd,
    TurnStart,
)
from host.sessions.persistence import PersistenceError
from host.subagents.descriptors import (
    ContinuableDescriptor,
    Corrupt,
    OneShotDescriptor,
    Unsupported,
    descriptor_data,
    parse_descriptor,
)
from tests.profile import scale

QUICK = settings(
    max_examples=scale(250, 3000),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# -- descriptors --------------------------------------------------------------------------

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
# Logs hold JSON: non-finite floats are not JSON. The orjson codec writes them as ``null`` (a
# silent change of an acknowledged event; see docs/reliability.md, "Known gaps"), so the
# recovery property draws finite floats only.
finite_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
FIELDS = [
    "version",
    "mode",
    "provider",
    "label",
    "model",
    "persona",
    "tool_filter",
    "max_steps",
    "profile",
    "mcp_servers",
    "extra",
]
near_descriptors = st.fixed_dictionaries(
    {},
    optional={
        "version": st.sampled_from([2, 2, 2, 1, 3, True, 2.0, "2", None]),
        "mode": st.sampled_from(["one-shot", "continuable", "CONTINUABLE", "", None, 1]),
        "provider": st.sampled_from(["spawn", "fork", "", None, 7, ["spawn"]]),
        "label": st.one_of(st.none(), st.text(max_size=10), st.integers()),
        "model": st.one_of(st.none(), st.text(max_size=10), st.booleans()),
        "persona": st.one_of(st.none(), st.text(max_size=10), st.lists(st.text(max_size=3))),
        "tool_filter": st.one_of(
            st.none(),
            st.fixed_dictionaries(
                {},
                optional={
                    "allow": st.one_of(
                        st.none(), st.lists(st.text(max_size=5), max_size=3), st.text()
                    ),
                    "deny": st.one_of(st.none(), st.lists(json_scalars, max_size=3)),
                    "other": json_scalars,
                },
            ),
            json_values,
        ),
        "max_steps": st.one_of(st.none(), st.integers(min_value=-2, max_value=5), st.booleans()),
        "profile": st.one_of(st.none(), st.text(max_size=10), st.integers()),
        "mcp_servers": st.one_of(st.none(), st.lists(json_scalars, max_size=3), st.text()),
        "extra": json_values,
    },
)


@pytest.mark.slow
@QUICK
@given(st.one_of(json_values, near_descriptors))
def test_any_json_value_is_a_descriptor_corrupt_or_unsupported(value: Any) -> None:
    verdict = parse_descriptor(value)  # must never raise
    assert isinstance(verdict, OneShotDescriptor | ContinuableDescriptor | Corrupt | Unsupported)
    version = value.get("version") if isinstance(value, dict) else None
    if not isinstance(value, dict) or type(version) is not int:
        assert isinstance(verdict, Corrupt)  # bool, float, str versions are damage
    elif version != 2:
        assert verdict == Unsupported(version)  # checked first: a newer writer, not damage
    if isinstance(verdict, OneShotDescriptor | ContinuableDescriptor):
        assert verdict.mode == value["mode"] and verdict.provider == value["provider"]
        assert set(value) <= set(FIELDS) - {"extra"}  # unknown keys are rejected
        steps = getattr(verdict, "max_steps", None)
        assert steps is None or (type(steps) is int and steps >= 1)  # a resumable limit
        again = parse_descriptor(descriptor_data(verdict))  # the JSON form round-trips
        assert again == verdict
    if isinstance(verdict, Corrupt):
        assert isinstance(verdict.problem, str)


# -- JSONL recovery -----------------------------------------------------------------------

texts = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=40)
bodies = st.one_of(
    st.builds(lambda c: MessageEvent(role="user", content=c), texts),
    st.builds(lambda c: MessageEvent(role="assistant", content=c), texts),
    st.builds(lambda i: TurnStart(turn_id=f"t{i}"), st.integers(0, 99)),
    st.builds(
        lambda i, r: TurnEnd(turn_id=f"t{i}", stop_reason=r),
        st.integers(0, 99),
        st.sampled_from(["completed", "interrupted", "error", "max_steps"]),
    ),
    st.builds(
        lambda i, c: InboxAccepted(message_id=f"m{i}", delivery="steer", content=c),
        st.integers(0, 99),
        texts,
    ),
    st.builds(lambda i: InboxClaimed(message_ids=(f"m{i}",)), st.integers(0, 99)),
    st.builds(lambda v: SubagentDescriptorEvent(v), finite_values),
)
# A damage is (kind, position in [0, 1), payload). Every kind makes the line it touches
# undecodable (a raw NUL or a split line is never valid JSON), so what follows the damage
# cannot silently pass for an original event.
damages = st.tuples(
    st.sampled_from(["truncate", "nul", "newline", "garbage", "drop-newline"]),
    st.floats(min_value=0.0, max_value=1.0, exclude_max=True),
    st.binary(min_size=0, max_size=12),
)


def line_spans(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of every line, newline included."""
    spans, start = [], 0
    while start < len(data):
        end = data.index(b"\n", start) + 1
        spans.append((start, end))
        start = end
    return spans


def damage(data: bytes, kind: str, where: float, payload: bytes) -> tuple[bytes, int]:
    """The damaged bytes and the offset of the first damaged byte."""
    at = int(where * len(data))
    if kind == "truncate":
        return data[:at], at
    if kind == "nul":
        return data[:at] + b"\x00" + data[at + 1 :], at
    if kind == "newline":
        return data[:at] + b"\n" + data[at:], at
    if kind == "garbage":
        return data[:at] + payload + b"\x00" + data[at + len(payload) + 1 :], at
    # drop a newline: two lines run together (the first newline at or after ``at``)
    nl = data.find(b"\n", at)
    return data[:nl] + data[nl + 1 :], nl


@pytest.mark.slow
@QUICK
@given(st.lists(bodies, max_size=12), st.lists(damages, min_size=1, max_size=2))
def test_damaged_logs_read_as_a_prefix_and_load_repairs_or_refuses(
    events: list[EventBody], hits: list[tuple[str, float, bytes]]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        persistence = JsonlPersistence(Path(tmp), fsync="never")
        header = SessionHeader(id="s1", created_at=7)
        original = tuple(Event(seq, body) for seq, body in enumerate(events))
        persistence.open_writer(header, create=True, events=original).close()
        path = persistence.path_for("s1")
        data = path.read_bytes()
        spans = line_spans(data)
        first = len(data)
        for kind, where, payload in hits:
            data, at = damage(data, kind, where, payload)
            first = min(first, at)
        path.write_bytes(data)
        # the lines wholly before the first damaged byte are untouched
        intact = sum(1 for _start, end in spans if end <= first)
        try:
            inspected = asyncio.run(persistence.inspect("s1"))
        except PersistenceError as error:
            assert error.code == PersistenceError.CORRUPT
            assert intact == 0  # only a damaged header makes a log unusable
            assert path.read_bytes() == data  # inspect never writes
            return
        assert path.read_bytes() == data
        assert inspected.header == header
        got = inspected.events
        assert got == original[: len(got)]  # a prefix of what was written …
        assert len(got) >= intact - 1  # … holding every untouched event line
        assert inspected.valid_bytes + inspected.ignored_bytes == len(data)
        try:
            loaded = asyncio.run(load(persistence, "s1"))
        except PersistenceError as error:
            assert error.code == PersistenceError.CORRUPT and inspected.damaged_middle
            assert path.read_bytes() == data  # refused: nothing changed
            return
        assert not inspected.damaged_middle
        assert loaded.events[: len(got)] == got
        assert loaded.repaired_bytes == inspected.ignored_bytes
        if inspected.open_turn is not None:
            assert loaded.events[len(got) :] == (
                Event(len(got), TurnEnd(turn_id=inspected.open_turn, stop_reason="interrupted")),
            )
        else:
            assert len(loaded.events) == len(got)
        after = asyncio.run(persistence.inspect("s1"))
        assert after.events == loaded.events  # read back whole
        assert after.ignored_bytes == 0 and not after.damaged_middle
        writer = persistence.open_writer(header, create=False)  # and appendable again
        writer.append([Event(len(loaded.events), MessageEvent(role="user", content="next"))])
        writer.close()
        assert len(asyncio.run(persistence.inspect("s1")).events) == len(loaded.events) + 1


def test_non_finite_floats_are_not_stored_faithfully(tmp_path: Path) -> None:
    """Documents a known gap (docs/reliability.md): with the orjson backend a non-finite float
    in an event is stored as ``null``. If this starts failing, the gap was closed: update the
    docs and drop the finite-only restriction of the recovery property."""
    from host.sessions.codec import BACKEND

    persistence = JsonlPersistence(tmp_path, fsync="never")
    event = Event(0, SubagentDescriptorEvent({"x": float("inf")}))
    persistence.open_writer(SessionHeader(id="f"), create=True, events=[event]).close()
    stored = asyncio.run(persistence.inspect("f"))
    # orjson writes null; the stdlib fallback writes Infinity, which it also reads back
    expected = None if BACKEND == "orjson" else float("inf")
    assert stored.events[0].body == SubagentDescriptorEvent({"x": expected})


def test_damage_helper_breaks_lines() -> None:
    data = b'{"a":1}\n{"b":2}\n'
    assert damage(data, "drop-newline", 0.0, b"") == (b'{"a":1}{"b":2}\n', 7)
    with pytest.raises(ValueError):
        line_spans(b"no newline")


# -- the inbox ----------------------------------------------------------------------------

OPS = st.lists(
    st.sampled_from(["followup", "steer", "inject", "interrupt", "step", "step", "step"]),
    max_size=25,
)
TAILS = st.sampled_from(
    [[], ["interrupt"], ["followup", "interrupt"], ["steer", "followup", "inject", "interrupt"]]
)


class Stepper:
    """A model whose every call waits for a permit the test hands out (``step``); it answers
    with a tool call or a final text by a drawn pattern, so turns have one or more steps."""

    def __init__(self, pattern: list[bool]) -> None:
        self.permits = asyncio.Semaphore(0)
        self.pattern = pattern or [False]
        self.calls = 0

    async def complete(self, request: Any, *, signal: Any) -> Any:
        from host.agents import call, say

        await self.permits.acquire()
        self.calls += 1
        if self.pattern[self.calls % len(self.pattern)]:
            return call("echo", text="x")
        return say("ok")


async def interleave() -> None:
    """Let the agent run a little between two operations (any amount: ``check_inbox`` holds at
    every moment; quiescence is reached by ``wait_idle``, not by yielding)."""
    for _ in range(12):
        await asyncio.sleep(0)


def check_inbox(agent: Any, *, quiescent: bool) -> None:
    """Every accepted message is claimed at most once, FIFO per kind, the rest pending."""
    events = list(agent.session.events)
    accepted = [e.body for e in events if isinstance(e.body, InboxAccepted)]
    claims = [mid for e in events if isinstance(e.body, InboxClaimed) for mid in e.body.message_ids]
    pending = [m.message_id for m in agent.inbox.pending()]
    assert len(claims) == len(set(claims)), "a message was claimed twice"
    assert not set(claims) & set(pending)
    assert sorted(claims + pending) == sorted(a.message_id for a in accepted)
    position = {mid: index for index, mid in enumerate(claims)}
    for kind in ("followup", "steer", "inject"):
        of_kind = [a.message_id for a in accepted if a.delivery == kind]
        claimed = [mid for mid in of_kind if mid in position]
        assert claimed == of_kind[: len(claimed)], f"{kind}: a later message overtook an earlier"
        assert sorted(claimed, key=position.__getitem__) == claimed, f"{kind}: not FIFO"
    delivered = [
        e.body.message_id
        for e in events
        if isinstance(e.body, MessageEvent) and e.body.role == "user"
    ]
    assert delivered == claims  # each claim is followed by its user message, once
    if quiescent and any(m.delivery != "inject" for m in agent.inbox.pending()):
        assert agent.inbox.parked, "turn work left unclaimed without an interrupt"
        event("turn work parked at quiescence")


@pytest.mark.slow
@settings(
    max_examples=scale(80, 800),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(OPS, TAILS, st.lists(st.booleans(), max_size=4))
def test_inbox_interleavings_claim_each_message_once_fifo_or_park(
    ops: list[str], tail: list[str], pattern: list[bool]
) -> None:
    asyncio.run(_inbox_scenario(ops + tail, pattern))


async def _inbox_scenario(ops: list[str], pattern: list[bool]) -> None:
    from host.agents import AgentRegistry, ModelRegistry, section_registry
    from host.sessions.projections import Projections
    from host.sessions.store import SessionStore
    from host.tools.scope import tool_registry
    from tests.agents.helpers import echo

    with tempfile.TemporaryDirectory() as tmp:
        persistence = JsonlPersistence(Path(tmp), fsync="never")
        store = SessionStore(persistence, Projections())
        models = ModelRegistry()
        stepper = Stepper(pattern)
        models.register("stepper", stepper, owner="test")
        tools = tool_registry()
        tools.register("echo", echo, owner="test")
        agents = AgentRegistry(store, models, tools, section_registry(), ctx=None)
        agent = await agents.create(label="w", max_steps=4)
        try:
            for index, op in enumerate(ops):
                if op == "step":
                    stepper.permits.release()
                elif op == "interrupt":
                    agent.interrupt(keep_inbox=True)
                else:
                    getattr(agent, op)(f"{op} {index}")
                await interleave()
                check_inbox(agent, quiescent=False)
            for _ in range(200):  # let everything run: what is left must be parked
                stepper.permits.release()
            await agent.wait_idle()
            assert agent.status == "idle"
            check_inbox(agent, quiescent=True)
            agent.followup("flush")  # a waking send unparks: everything is delivered
            for _ in range(400):
                stepper.permits.release()
            await agent.wait_idle()
            check_inbox(agent, quiescent=True)
            assert agent.inbox.pending() == ()
        finally:
            await agents.dispose_all()
        log = await persistence.inspect(agent.id)
        assert log.events == tuple(agent.session.events)  # every claim is durable
        accepted = {e.body.message_id for e in log.events if isinstance(e.body, InboxAccepted)}
        claimed = {
            m for e in log.events if isinstance(e.body, InboxClaimed) for m in e.body.message_ids
        }
        assert accepted == claimed  # a resume would replay nothing
