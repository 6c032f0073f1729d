"""Speaking for a session: no message leaves a host on behalf of a session it lost.

Every subagent message is sent on behalf of a session: a ``send_message`` followup on behalf
of the parent, a report and a settlement notice on behalf of the child. Before a host
delivers one in process it checks the sender's ``Voice`` (``host.sessions.persistence``),
taken from the sender's writer; for a message queued for another host the backend checks the
same voice in the statement that queues it (``RemoteInbox.send_remote``). A host paused past
its leases, whose sessions another host took over meanwhile, so sends nothing for them: the
sessions live on the other host now.
"""

from __future__ import annotations

from host.sessions.persistence import Voice
from host.subagents import texts


async def ensure_voice(voice: Voice | None) -> None:
    """Return if ``voice`` holds (or is None: the sender is stored nowhere); else raise
    ``texts.sender_fenced`` (``LOCKED``). A failing check raises ``PersistenceError``."""
    if voice is not None and not await voice.holds():
        raise texts.sender_fenced(voice.session_id)
