"""The identity unit and the identity rule, on event lists (no storage)."""

from __future__ import annotations

from host.sessions.model import Event, MessageEvent, SessionHeader, SubagentDescriptorEvent
from host.sessions.projections import ProjectionFailure, fold_events
from host.subagents.descriptors import parse_descriptor
from host.subagents.identity import (
    IDENTITY_UNIT,
    Identity,
    IdentityProblem,
    IdentityState,
    identity_verdict,
    judge_descriptor,
)
from tests.subagents.harness import continuable, one_shot


def fold(*bodies) -> IdentityState:
    state = fold_events(IDENTITY_UNIT, [Event(i, b) for i, b in enumerate(bodies)])
    assert isinstance(state, IdentityState)
    return state


def header(seed_length: int = 0) -> SessionHeader:
    return SessionHeader(id="c", parent_session="p", origin="subagent", seed_length=seed_length)


def msg() -> MessageEvent:
    return MessageEvent(role="user", content="hi")


def test_fold_collects_descriptor_events_only() -> None:
    state = fold(msg(), SubagentDescriptorEvent(continuable("a")), msg())
    assert [(s.seq, s.raw["label"]) for s in state.seen] == [(1, "a")]


def test_fold_does_not_mutate_its_input() -> None:
    before = IdentityState()
    after = IDENTITY_UNIT.fold(before, Event(0, SubagentDescriptorEvent(one_shot())))
    assert before.seen == () and len(after.seen) == 1


def test_single_own_descriptor_is_the_identity() -> None:
    state = fold(msg(), SubagentDescriptorEvent(continuable("w", provider="fork")))
    assert identity_verdict(state, header(), live=False) == Identity("continuable", "w", "fork", 1)
    state = fold(SubagentDescriptorEvent(one_shot()))
    assert identity_verdict(state, header(), live=True) == Identity("one-shot", None, "spawn", 0)


def test_seed_descriptors_never_count() -> None:
    state = fold(SubagentDescriptorEvent(continuable("ancestor")), msg())
    assert identity_verdict(state, header(seed_length=2), live=True) is None
    settled = identity_verdict(state, header(seed_length=2), live=False)
    assert isinstance(settled, IdentityProblem) and settled.reason == "corrupt"
    assert settled.seq is None
    state = fold(
        SubagentDescriptorEvent(continuable("ancestor")),
        SubagentDescriptorEvent(continuable("own")),
    )
    assert identity_verdict(state, header(seed_length=1), live=False) == Identity(
        "continuable", "own", "spawn", 1
    )


def test_several_own_descriptors_are_corrupt_with_the_last_seq() -> None:
    state = fold(SubagentDescriptorEvent(one_shot()), msg(), SubagentDescriptorEvent(one_shot()))
    for live in (True, False):
        verdict = identity_verdict(state, header(), live=live)
        assert verdict == IdentityProblem("corrupt", 2, verdict.detail)


def test_unsupported_and_corrupt_descriptors() -> None:
    assert judge_descriptor({"version": 3}, 4) == IdentityProblem(
        "unsupported", 4, "unknown descriptor version"
    )
    bad = judge_descriptor({"version": 2, "mode": "one-shot"}, 0)
    assert isinstance(bad, IdentityProblem) and bad.reason == "corrupt" and bad.seq == 0
    assert judge_descriptor(None, 0).reason == "corrupt"


def test_judge_accepts_parsed_descriptors_and_verdicts() -> None:
    parsed = parse_descriptor(continuable("p"))
    assert judge_descriptor(parsed, 3) == Identity("continuable", "p", "spawn", 3)
    verdict = IdentityProblem("corrupt", 1)
    assert judge_descriptor(verdict, 9) is verdict


def test_failed_projection_state_is_corrupt() -> None:
    verdict = identity_verdict(ProjectionFailure("subagent/identity", "boom"), header(), live=True)
    assert isinstance(verdict, IdentityProblem) and verdict.reason == "corrupt"


def test_profile_keys_are_optional_in_version_2() -> None:
    from host.subagents.descriptors import ContinuableDescriptor, Corrupt, Unsupported

    old = {"version": 2, "mode": "continuable", "provider": "spawn", "label": "a"}
    parsed = parse_descriptor(old)  # written before max_steps/profile/mcp_servers existed
    assert isinstance(parsed, ContinuableDescriptor)
    assert (parsed.max_steps, parsed.profile, parsed.mcp_servers) == (None, None, None)
    new = {**old, "max_steps": 3, "profile": "reader", "mcp_servers": ["git"]}
    parsed = parse_descriptor(new)
    assert isinstance(parsed, ContinuableDescriptor)
    assert (parsed.max_steps, parsed.profile, parsed.mcp_servers) == (3, "reader", ["git"])
    for bad in ({"max_steps": 0}, {"max_steps": "3"}, {"profile": 7}, {"mcp_servers": "git"}):
        assert isinstance(parse_descriptor({**old, **bad}), Corrupt), bad
    assert parse_descriptor({**new, "version": 3}) == Unsupported(3)
    one_shot_with_profile = {"version": 2, "mode": "one-shot", "provider": "spawn", "profile": "x"}
    assert isinstance(parse_descriptor(one_shot_with_profile), Corrupt)
