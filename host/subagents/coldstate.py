"""Reading a settled child for a cold resume: its stored header and its continuable descriptor.

Cold resume is provider-independent: everything it rebuilds comes from the child's single own
descriptor, found by the identity rule (``host.subagents.identity.identity_verdict``) — the
same rule listing uses. A one-shot descriptor, none, several, a corrupt or an unsupported one
all mean "no supported continuation state" (``NOT_RESUMABLE``).

Storage failures map to the followup reason texts: a missing session (or one whose header
cannot be read, so nobody can be authorized for it) is ``unavailable``; a cancelled read is
``cancelled before acceptance``; a lock held elsewhere is ``in use by another host``.
"""

from __future__ import annotations

from collections.abc import Sequence

from host.cancel import CancelSignal
from host.errors import HostError
from host.sessions.model import Event, SessionHeader, SubagentDescriptorEvent
from host.sessions.persistence import PersistenceError, SessionPersistence, StoredSession
from host.sessions.projections import fold_events
from host.subagents import texts
from host.subagents.descriptors import ContinuableDescriptor, parse_descriptor
from host.subagents.errors import SubagentError
from host.subagents.identity import IDENTITY_UNIT, Identity, identity_verdict


async def inspect_child(
    persistence: SessionPersistence, child_id: str, signal: CancelSignal | None
) -> StoredSession:
    """The stored child, read without repairing anything; reason-text errors otherwise."""
    try:
        return await persistence.inspect(child_id, signal=signal)
    except PersistenceError as error:
        if error.code == PersistenceError.CORRUPT:  # no readable header: nobody to authorize
            raise texts.unavailable(child_id) from error
        raise storage_error(child_id, error) from error
    except HostError as error:  # e.g. an id that can never name a session
        raise texts.unavailable(child_id) from error


def storage_error(child_id: str, error: PersistenceError) -> SubagentError:
    """The followup error for a persistence failure while reading or resuming ``child_id``."""
    if error.code == PersistenceError.LOCKED:
        return texts.locked(child_id)
    if error.code == PersistenceError.CANCELLED:
        return texts.cancelled()
    if error.code == PersistenceError.CORRUPT:
        return texts.not_resumable(child_id)
    return texts.unavailable(child_id)


def continuable_descriptor_of(
    events: Sequence[Event], header: SessionHeader
) -> ContinuableDescriptor | None:
    """The child's continuable descriptor by the identity rule, or None (not resumable)."""
    verdict = identity_verdict(fold_events(IDENTITY_UNIT, events), header, live=False)
    if not isinstance(verdict, Identity) or verdict.mode != "continuable":
        return None
    for event in events:
        if event.seq == verdict.seq and isinstance(event.body, SubagentDescriptorEvent):
            parsed = parse_descriptor(event.body.descriptor)
            return parsed if isinstance(parsed, ContinuableDescriptor) else None
    return None
