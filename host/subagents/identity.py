"""The subagent identity projection unit and the identity rule (docs/subagents.md).

The unit (``IDENTITY_UNIT``, key ``IDENTITY_KEY``) folds every ``subagent/descriptor`` event of a
session into an ``IdentityState``: the ``(seq, raw descriptor)`` pairs in log order. A fold
never sees the session header, so it cannot tell a fork seed's copied descriptor from the
session's own; ``identity_verdict`` applies the rule once the header is known:

* only **own** descriptors count (``seq >= header.seed_length``); a descriptor copied in a fork
  seed never lends a session its ancestor's identity;
* exactly one own descriptor → its parse: an ``Identity``, or an ``IdentityProblem`` whose
  reason is ``unsupported`` (unknown version) or ``corrupt`` (malformed content);
* several own descriptors → ``corrupt``;
* none: a **live** session is in its creation window (``None``: omit it from listings), a
  settled one is ``corrupt``;
* a state that is not an ``IdentityState`` (e.g. the ``ProjectionFailure`` of a unit that raised)
  → ``corrupt`` for that session only.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs

from host.sessions.model import Event, SessionHeader, SubagentDescriptorEvent
from host.sessions.projections import ProjectionUnit
from host.subagents.descriptors import (
    ContinuableDescriptor,
    Corrupt,
    Descriptor,
    OneShotDescriptor,
    Unsupported,
    parse_descriptor,
)
from host.subagents.types import ChildMode

IDENTITY_KEY = "subagent/identity"
"""The projection key of the identity unit."""

IDENTITY_UNIT_VERSION = 1
"""Bumped when the fold's meaning changes; index rows of another version are not trusted."""

ProblemReason = Literal["corrupt", "unsupported"]


@attrs.frozen
class DescriptorSeen:
    """One descriptor event as the fold saw it: its ``seq`` and its raw JSON value."""

    seq: int
    raw: Any


@attrs.frozen
class IdentityState:
    """The unit's state: every descriptor event of the session, in log order."""

    seen: tuple[DescriptorSeen, ...] = ()


@attrs.frozen
class Identity:
    """A child's durable identity, taken from its single own descriptor at ``seq``."""

    mode: ChildMode
    label: str | None
    provider: str
    seq: int


@attrs.frozen
class IdentityProblem:
    """A child that is a subagent but cannot be listed as one.

    ``seq`` is the seq of the (last) own descriptor the problem was judged from, or ``None``
    when the settled child has no own descriptor. ``detail`` is for logs only: it is never
    shown to a model and never contains descriptor content beyond the parser's complaint.
    """

    reason: ProblemReason
    seq: int | None = None
    detail: str = ""


IdentityVerdict = Identity | IdentityProblem | None
"""``None`` only for a live child with no own descriptor yet (its creation window)."""


def _fold(state: IdentityState, event: Event) -> IdentityState:
    body = event.body
    if isinstance(body, SubagentDescriptorEvent):
        return IdentityState((*state.seen, DescriptorSeen(event.seq, body.descriptor)))
    return state


IDENTITY_UNIT: ProjectionUnit[IdentityState] = ProjectionUnit(
    key=IDENTITY_KEY,
    initial=IdentityState,
    fold=_fold,
    version=IDENTITY_UNIT_VERSION,
)
"""The identity projection unit; the subagent service registers it with ``projections``."""


def judge_descriptor(value: object, seq: int) -> Identity | IdentityProblem:
    """The verdict of one descriptor at ``seq``: a raw JSON value, a parsed descriptor, or a
    verdict (returned as it is). Never raises."""
    if isinstance(value, Identity | IdentityProblem):
        return value
    parsed: Descriptor | Corrupt | Unsupported
    if isinstance(value, OneShotDescriptor | ContinuableDescriptor):
        parsed = value
    else:
        parsed = parse_descriptor(value)
    if isinstance(parsed, Unsupported):
        return IdentityProblem("unsupported", seq, "unknown descriptor version")
    if isinstance(parsed, Corrupt):
        return IdentityProblem("corrupt", seq, parsed.problem)
    return Identity(mode=parsed.mode, label=parsed.label, provider=parsed.provider, seq=seq)


def identity_verdict(state: object, header: SessionHeader, *, live: bool) -> IdentityVerdict:
    """Apply the identity rule (module docstring) to a folded ``state`` of ``header``'s session."""
    if not isinstance(state, IdentityState):
        return IdentityProblem("corrupt", None, "identity projection failed")
    own = [seen for seen in state.seen if seen.seq >= header.seed_length]
    if not own:
        if live:
            return None
        return IdentityProblem("corrupt", None, "settled subagent has no own descriptor")
    if len(own) > 1:
        return IdentityProblem(
            "corrupt", own[-1].seq, f"{len(own)} own descriptors (exactly one is allowed)"
        )
    return judge_descriptor(own[0].raw, own[0].seq)
