"""Every model-facing reason text of the subagent service (docs/subagents.md), in one place.

Each ``SubagentError`` the service raises carries one of these texts as its message, so an
adapter (``send_message``, ``interrupt_agent``, ``report``) can show it unchanged. The
functions here build the error; the code ↔ text table is in ``host.subagents.service``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from host.sessions.persistence import PersistenceError
from host.subagents.errors import SubagentError

if TYPE_CHECKING:
    from host.sessions.model import StopReason

# -- followup (send_message) ----------------------------------------------------------------


def unavailable(child_id: str) -> SubagentError:
    """An unknown id, or a session that is no subagent."""
    return SubagentError("UNAVAILABLE", f'subagent "{child_id}" is unavailable')


def not_resumable(child_id: str) -> SubagentError:
    """A one-shot child, or one with no or a corrupt/unsupported descriptor."""
    return SubagentError(
        "NOT_RESUMABLE",
        f'subagent "{child_id}" has no supported continuation state and cannot be resumed; '
        "do not retry send_message with this id",
    )


def other_parent(child_id: str) -> SubagentError:
    """The caller is not the child's durable parent."""
    return SubagentError("UNAUTHORIZED", f'subagent "{child_id}" belongs to another parent session')


def stale_parent(child_id: str) -> SubagentError:
    """The caller has the parent's id but is not the live agent registered under it."""
    return SubagentError(
        "UNAUTHORIZED", f'subagent "{child_id}" delivery requires the exact live parent agent'
    )


def closing(child_id: str) -> SubagentError:
    """The child's ChildActivation is settling or being released."""
    return SubagentError("ACTIVATION_CLOSING", f'subagent "{child_id}" is closing')


def draining() -> SubagentError:
    """Admission below the caller is closed (drain or shutdown)."""
    return SubagentError("DRAINING", "subagents are draining")


def locked(child_id: str) -> SubagentError:
    """Another host holds the child's session lock."""
    return SubagentError("LOCKED", f'subagent "{child_id}" is in use by another host')


def sender_fenced(session_id: str) -> SubagentError:
    """Another host took over the session a message would be sent on behalf of: ``session
    "<id>" was taken over by another host since this host held it; nothing was sent on its
    behalf`` (the words of ``PersistenceError.fenced``, whichever check refused)."""
    return SubagentError("LOCKED", PersistenceError.fenced(session_id).message)


def cancelled() -> SubagentError:
    """The caller's signal was set before the message was accepted."""
    return SubagentError("CANCELLED", "cancelled before acceptance")


def duplicate_child(message: str) -> SubagentError:
    """A child id that is live already (``DUPLICATE_CHILD``), for the reason ``message``."""
    return SubagentError("DUPLICATE_CHILD", message)


def live_outside(child_id: str) -> SubagentError:
    """The child is live here, but as no resident ChildActivation of the continuation manager."""
    return duplicate_child(f'subagent "{child_id}" is live outside the continuation manager')


def already_live(child_id: str) -> SubagentError:
    """Resuming the child found it live (or being resumed) already."""
    return duplicate_child(f'subagent "{child_id}" is already live')


# -- interrupt (interrupt_agent) ------------------------------------------------------------


def interrupt_self(target_id: str) -> SubagentError:
    """An agent asked to interrupt itself."""
    return SubagentError("UNAUTHORIZED", f'agent "{target_id}" cannot interrupt itself')


def not_descendant(target_id: str, caller_id: str) -> SubagentError:
    """The caller is no ancestor of the target."""
    return SubagentError(
        "UNAUTHORIZED", f'subagent "{target_id}" is not a live descendant of agent "{caller_id}"'
    )


def stale_ancestor(target_id: str) -> SubagentError:
    """The caller has an ancestor's id but is not that exact live agent."""
    return SubagentError(
        "UNAUTHORIZED", f'interrupting "{target_id}" requires the exact live ancestor agent'
    )


# -- report_from (report) -------------------------------------------------------------------


def not_reporter(child_id: str) -> SubagentError:
    """The sender is not the exact resident continuable child."""
    return SubagentError(
        "UNAUTHORIZED",
        f'agent "{child_id}" is not a live continuable subagent and cannot report',
    )


def parent_unavailable() -> SubagentError:
    """The direct parent is not live (or refused the message)."""
    return SubagentError(
        "PARENT_UNAVAILABLE", "direct parent is not live; report was not delivered"
    )


def report_closing(child_id: str) -> SubagentError:
    """The reporting child's ChildActivation is closing."""
    return SubagentError(
        "ACTIVATION_CLOSING", f'subagent "{child_id}" is closing; report was not delivered'
    )


def report_draining() -> SubagentError:
    """Admission is closed around the reporting child."""
    return SubagentError("DRAINING", "subagents are draining; report was not delivered")


def report_cancelled() -> SubagentError:
    """The caller's signal was set before delivery."""
    return SubagentError("CANCELLED", "report was cancelled before delivery")


def report_text(child_id: str, output: str) -> str:
    """The user-role message a parent receives for a report."""
    return f"Background subagent {child_id} reported:\n{output}"


# -- starting -------------------------------------------------------------------------------


def no_provider(name: str) -> SubagentError:
    """No provider of that name is registered."""
    return SubagentError("NO_PROVIDER", f'no subagent provider "{name}" is registered')


def duplicate_provider(name: str) -> SubagentError:
    """A provider of that name is registered already."""
    return SubagentError(
        "DUPLICATE_PROVIDER", f'a subagent provider "{name}" is already registered'
    )


def depth_exceeded(provider: str, depth: int, limit: int) -> SubagentError:
    """The child would sit deeper than the provider allows."""
    return SubagentError(
        "DEPTH_EXCEEDED",
        f"cannot start a subagent at delegation depth {depth}: provider "
        f'"{provider}" allows at most depth {limit}',
    )


def start_cancelled() -> SubagentError:
    """The caller's signal was set before the child was published."""
    return SubagentError("CANCELLED", "cancelled before the subagent was started")


def continuation_unavailable() -> SubagentError:
    """No continuation manager: the ``agents`` service is absent."""
    return SubagentError(
        "CONTINUATION_UNAVAILABLE",
        "continuable subagents are unavailable: the agents service is not present",
    )


def not_continuable_provider(name: str) -> SubagentError:
    """The provider cannot start continuable children."""
    return SubagentError(
        "CONTINUATION_UNAVAILABLE",
        f'subagent provider "{name}" cannot start continuable subagents',
    )


def persistence_unavailable() -> SubagentError:
    """Continuable children need session persistence."""
    return SubagentError(
        "PERSISTENCE_UNAVAILABLE",
        "continuable subagents need session persistence, which is not present",
    )


def runtime_unavailable() -> SubagentError:
    """One-shot children need the sessions and models services."""
    return SubagentError(
        "UNAVAILABLE", "starting a subagent needs the sessions and models services"
    )


# -- settlement ------------------------------------------------------------------------------

_SUMMARY: dict[str, str] = {
    "completed": "finished and will do no further work unless you send it more.",
    "interrupted": "was stopped before it finished.",
    "max_steps": "ran out of steps before it finished.",
    "max_tokens": "ran out of tokens before it finished.",
    "error": "failed before it finished.",
}


def settlement_notice(child_id: str, stop_reason: StopReason, last_answer: str | None) -> str:
    """The one user-role message a parent gets when its continuable child settles."""
    summary = f"Background subagent {child_id} {_SUMMARY[stop_reason]}"
    if last_answer:
        return f"{summary}\n\nIts closing message:\n{last_answer}"
    return f"{summary}\n\nIt left no closing message."
