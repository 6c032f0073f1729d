"""Stored descendants a restart left waiting on the user: found from the root's log, resumed
when their root is (so their open requests are asked again), cancelled by an ancestor's
``interrupt_agent``.

A request a child asked is mirrored into its root's log (``host.approvals``), so the root's
log names every agent of its tree with a request still without a decision. When a root
conversation is resumed (``Commands.resume``/``open``: ``chat --resume``/``--continue``,
``thread/resume``, ``mcp serve``), each such descendant that is not live is cold-resumed under
its stored ancestors (``ContinuationManager.wake``, the path ``send_message`` takes): its
resume asks the request again and its turn goes on, and its report reaches the root as it
would have. Which agents are ancestors is read from the stored headers' ``parent_session``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from host.errors import HostError
from host.sessions.persistence import PersistenceError
from host.subagents import texts
from host.subagents.coldstate import inspect_child, storage_error

if TYPE_CHECKING:
    from host.agents.agent import Agent
    from host.approvals.service import ApprovalService
    from host.sessions.persistence import SessionPersistence
    from host.sessions.store import SessionStore
    from host.subagents.manager import ContinuationManager

log = logging.getLogger(__name__)


async def resume_waiting(
    manager: ContinuationManager, approvals: ApprovalService, root: Agent
) -> None:
    """Cold-resume each stored descendant of the live ``root`` with a request to the user
    left open in ``root``'s log, oldest request first, with the stored agents between them;
    one that cannot be resumed is a warning (held by another host, unreadable) and stays
    waiting; a foreground (one-shot) one, which is never resumed, is passed over quietly."""
    persistence = manager.persistence
    if persistence is None:
        return
    for agent_id in approvals.stored_requesters(root):
        try:
            path = await stored_path(persistence, root.id, agent_id)
            if path:
                await manager.wake(root, path)
        except HostError as error:
            level = logging.DEBUG if error.code == "NOT_RESUMABLE" else logging.WARNING
            message = "%s waits on the user but cannot be resumed: %s"
            log.log(level, message, agent_id, error.message)


async def stored_path(
    persistence: SessionPersistence, ancestor_id: str, agent_id: str
) -> list[str]:
    """The ids below ``ancestor_id`` down to ``agent_id`` (included), by the stored headers'
    ``parent_session``; empty when ``agent_id`` is not below ``ancestor_id``."""
    path: list[str] = []
    current: str | None = agent_id
    while current is not None and current != ancestor_id and current not in path:
        path.append(current)
        current = (await inspect_child(persistence, current, None)).header.parent_session
    return path[::-1] if current == ancestor_id and path else []


async def cancel_waiting(
    manager: ContinuationManager,
    approvals: ApprovalService,
    store: SessionStore,
    target_id: str,
    caller: Agent,
) -> None:
    """``interrupt_agent`` from ``caller`` on ``target_id``: when the target is only stored, a
    restart left it waiting on the user and it is below ``caller`` (its stored ancestry),
    its open requests are recorded ``cancelled`` (``ApprovalService.cancel_stored``) before
    this returns. Any other target is left as it is. A caller that is not the exact live
    agent is ``interrupting "<id>" requires the exact live ancestor agent``; a log held by
    another process, ``subagent "<id>" is in use by another host``."""
    persistence = manager.persistence
    if persistence is None or store.get(target_id) is not None:
        return
    if target_id not in approvals.stored_requesters(caller):
        return
    if not await stored_path(persistence, caller.id, target_id):
        return
    if manager.agents.get(caller.id) is not caller or caller.closed:
        raise texts.stale_ancestor(target_id)
    try:
        await approvals.cancel_stored(target_id, caller, store)
    except PersistenceError as error:
        raise storage_error(target_id, error) from error
