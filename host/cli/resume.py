"""``chat --resume [ID]``, ``chat --continue`` and ``run --resume ID``: go on with a stored root
conversation.

The root is resumed with its history (printed first, as ``sessions show`` prints it), its
stored subagents (cold-resumed when next addressed; at once those waiting on the user:
``host.subagents.waking``) and its open requests and theirs, asked again
(``host.approvals.resume``). What cannot be resumed is one line and exit 2, before anything is
written: an unknown id, a subagent's session (``… is a subagent's session; resume its root
conversation R``), a log that cannot be read, one another process holds (``LOCKED``), and
``--continue`` with no root conversation in the data directory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from host.clients.commands import ClientError, Commands
from host.errors import HostError
from host.sessions.activity import is_root, last_activity, root_of

if TYPE_CHECKING:
    from host.agents.agent import Agent
    from host.app import Host
    from host.sessions.model import SessionHeader

NOTHING_TO_CONTINUE = "no conversation to continue in {data_dir}"
A_CHILD = "session {id} is a subagent's session; resume its root conversation {root}"
CANNOT_RESUME = "cannot resume {id}: {message} ({code})"
RESUMING = "resuming conversation {id}"
STILL_OPEN = "{count} still open; {pronoun} will be asked again when this conversation resumes"
"""Said when a conversation closes with requests nobody answered (``still_open``)."""


async def pick_root(host: Host, wanted: str) -> str:
    """The id of the root conversation to resume: ``wanted``, or with ``wanted`` empty the
    root of the data directory active last (``last_activity``); ``HostError`` (one line) when
    there is none to resume."""
    persistence = host.services.find("session_persistence")
    if persistence is None:
        raise HostError("SERVICE_UNAVAILABLE", "no session persistence (is it blocked?)")
    headers: list[SessionHeader] = await persistence.list()
    if not wanted:
        latest = last_activity(persistence, headers)
        if not latest:
            data_dir = host.settings.data_dir
            raise HostError("NOT_FOUND", NOTHING_TO_CONTINUE.format(data_dir=data_dir))
        return max(latest, key=lambda root: (latest[root], root))
    by_id = {header.id: header for header in headers}
    header = by_id.get(wanted)
    if header is None:
        try:
            header = (await persistence.inspect(wanted)).header
        except HostError as error:
            raise _cannot(wanted, error) from error
    if not is_root(header):
        raise HostError("NOT_A_ROOT", A_CHILD.format(id=wanted, root=root_of(header, by_id)))
    return header.id


def _cannot(session_id: str, error: HostError) -> HostError:
    """``error`` said as ``CANNOT_RESUME`` (its code kept)."""
    text = CANNOT_RESUME.format(id=session_id, message=error.message, code=error.code)
    return HostError(error.code, text)


async def resume_root(host: Host, wanted: str) -> Agent:
    """Resume the root conversation ``pick_root`` chooses (its profile, if it has one, applied
    again: ``Commands.resume``); a failure is one ``CANNOT_RESUME`` line (``LOCKED`` when
    another process holds it)."""
    root_id = await pick_root(host, wanted)
    try:
        agent: Agent = await Commands(host).resume(root_id)
    except ClientError as error:  # LOCKED: said as the store says it, naming the other writer
        raise _cannot(root_id, error.stored or error) from error
    except HostError as error:
        raise _cannot(root_id, error) from error
    return agent


def print_history(agent: Agent, out: TextIO) -> None:
    """``RESUMING``, then the conversation so far as ``sessions show`` prints it."""
    from host.cli.style import Style
    from host.cli.transcript import render_events

    print(RESUMING.format(id=agent.id), file=out)
    for line in render_events(agent.session.events, Style.for_stream(out)):
        print(line, file=out)
    out.flush()


def still_open(host: Host) -> str | None:
    """``STILL_OPEN`` for the requests nobody answered (the host closing leaves them open, to
    be asked again on resume), None when there are none."""
    approvals = host.services.find("approvals")
    count = len(approvals.pending()) if approvals is not None else 0
    if not count:
        return None
    if count == 1:
        return STILL_OPEN.format(count="1 request", pronoun="it")
    return STILL_OPEN.format(count=f"{count} requests", pronoun="they")
