"""The commands front ends give a host: start or resume a root, send to it, steer, interrupt,
list its subagent tree, send to or interrupt a subagent, read a transcript from a ``seq``.

A *thread* is a root agent's session. Commands that act on a thread need it live in this
process as a root (``start`` or ``resume`` made it so); reads take any session, live or
stored, children included. Failures are ``ClientError`` with a stable ``code`` and one line:
``UNKNOWN_THREAD`` (no such session), ``NOT_A_ROOT`` (a subagent's session where a root is
needed), ``NOT_LIVE`` (a stored root not resumed here), ``LOCKED`` (another process holds it),
or the subagent service's codes with the texts of its tools (``send_message``,
``interrupt_agent``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from host.clients.items import Item, items_of
from host.clients.threads import ThreadList
from host.errors import HostError
from host.profiles.applying import check_model, check_servers, root_options
from host.sessions.model import Event, SessionHeader, new_id
from host.sessions.persistence import PersistenceError
from host.subagents.rows import ListScope, entries_of, listing_text, rows_of

if TYPE_CHECKING:
    from host.agents.agent import Agent
    from host.agents.registry import AgentSetup, SetupStep
    from host.disposal import Disposer
    from host.profiles.model import Profile
    from host.services import Services

ROOT_LABEL = "user"
"""The label of a root agent (``--script`` files address it by this name)."""

NOT_DELIVERED = "message was not delivered: "
"""What a failed send says first (as ``send_message`` does)."""


class RunningHost(Protocol):
    """What the client layer uses of a running host (``host.app.Host``, which loads the
    built-in plugins, and so ``host.api``, which names this layer for plugins that serve
    clients): its services, and closing it."""

    @property
    def services(self) -> Services:
        """The host's services (``agents``, ``sessions``, ``subagents``, …)."""
        ...

    async def aclose(self) -> Sequence[object]:
        """Shut the services down and close the host; what plugins' disposal raised."""
        ...


class ClientError(HostError):
    """A command that cannot be done: a stable ``code`` and one line. ``stored`` is the
    persistence's own error when this one says it in a client's words (``LOCKED``: the store's
    line names the other writer), for a front end that speaks as the store does
    (``chat --resume``)."""

    def __init__(self, code: str, message: str, *, stored: PersistenceError | None = None) -> None:
        super().__init__(code, message)
        self.stored = stored


@attrs.frozen
class Transcript:
    """Items of a session after some ``seq``, and the last ``seq`` they cover."""

    items: list[Item]
    last_seq: int


def _hold(setup: AgentSetup) -> Disposer:
    """The setup step of a held root (``Agent.hold``)."""
    setup.agent.hold()
    return lambda: None


class Commands:
    """What a front end can ask of the host (module docstring)."""

    def __init__(self, host: RunningHost) -> None:
        self._host = host
        self.threads = ThreadList(host.services)
        """Every stored or live root session, a page at a time (``ThreadList``)."""

    # -- roots -----------------------------------------------------------------------------

    async def start(
        self, *, label: str | None = None, model: str | None = None, profile: str | None = None
    ) -> Agent:
        """A new root agent (``model``: a registered model's name, else the profile's, else
        the default; ``profile``: the profile it gets what a child of it would, recorded in
        its header so every resume applies it again — with ``model``, when one is named)."""
        if model is not None:
            self._registered(model)
        agents = self._host.services.agents
        label = label or ROOT_LABEL
        if profile is None:
            return await agents.create(label=label, model=model)  # type: ignore[no-any-return]
        chosen = self._root_profile(profile, starting=True, own_model=model is None)
        header = SessionHeader(new_id("agent_"), label=label, profile=chosen.name, model=model)
        tool_filter, setup, max_steps = root_options(chosen)
        created: Agent = await agents.create(
            header,
            label=label,
            model=model if model is not None else chosen.model,
            tool_filter=tool_filter,
            setup=[setup],
            max_steps=max_steps,
        )
        return created

    async def resume(self, thread_id: str) -> Agent:
        """The stored root ``thread_id`` made live here (or the live one); its open approval
        requests are asked again."""
        live = self._host.services.agents.get(thread_id)
        if live is not None:
            return self._root(live)
        header = await self.header(thread_id)
        if header.parent_session is not None:
            raise _not_a_root(thread_id)
        return await self._resume(header, header.label or ROOT_LABEL, [])

    async def _resume(
        self, header: SessionHeader, label: str, setup: Sequence[SetupStep], *, wake: bool = True
    ) -> Agent:
        """The stored root of ``header`` made live, its profile (if it has one) applied again
        as its file reads now, on the model the header names, else the profile's, and
        (``wake``) its stored descendants a restart left waiting on the user resumed in the
        background, from the caller's next await (``SubagentService.resume_waiting``), so
        their requests are asked again. A profile or a model that is no longer there raises
        ``ClientError`` (``UNKNOWN_PROFILE``, ``UNKNOWN_MODEL``) and leaves the root stored as
        it was."""
        options: dict[str, Any] = {}
        if header.profile is not None:
            own_model = header.model is None
            if header.model is not None:
                self._registered(header.model)
            profile = self._root_profile(header.profile, own_model=own_model)
            tool_filter, step, max_steps = root_options(profile)
            setup = [step, *setup]
            model = profile.model if own_model else header.model
            options = {"model": model, "tool_filter": tool_filter, "max_steps": max_steps}
        try:
            agent: Agent = await self._host.services.agents.resume(
                header.id, label=label, setup=setup, **options
            )
        except PersistenceError as error:
            if error.code == PersistenceError.LOCKED:
                message = f'thread "{header.id}" is in use by another process'
                raise ClientError("LOCKED", message, stored=error) from error
            raise
        subagents = self._host.services.find("subagents")
        if wake and subagents is not None:  # its stored descendants waiting on the user ask
            subagents.resume_waiting(agent)
        return agent

    def _registered(self, model: str) -> None:
        """``UNKNOWN_MODEL`` unless ``model`` names a registered model."""
        if model not in self._host.services.models.names():
            raise ClientError("UNKNOWN_MODEL", f'no model "{model}"')

    def _root_profile(
        self, name: str, *, starting: bool = False, own_model: bool = True
    ) -> Profile:
        """The profile ``name`` for a root: its errors are the delegation tool's, said of a
        ``profile``. ``own_model``: the root runs on the profile's model, which must be
        registered; ``starting``: its MCP servers must be connected (a resumed root, like a
        resumed child, just goes without a server that went away)."""
        from host.profiles.matching import resolve
        from host.profiles.model import ProfileError, ProfileSet

        library = self._host.services.find("profiles")
        loaded = library.load() if library is not None else ProfileSet()
        try:
            profile = resolve(name, loaded, asked="profile")
        except ProfileError as error:
            raise ClientError(error.code, error.message) from None
        problem = check_model(self._host.services, profile) if own_model else None
        if problem is not None:
            raise ClientError("UNKNOWN_MODEL", problem)
        missing = check_servers(self._host.services, profile) if starting else None
        if missing is not None:
            raise ClientError("MCP_SERVER_NOT_CONNECTED", missing)
        return profile

    async def live_root(self, thread_id: str) -> Agent:
        """The live root agent of ``thread_id``."""
        agent = self._host.services.agents.get(thread_id)
        if agent is None:
            header = await self.header(thread_id)
            if header.parent_session is not None:
                raise _not_a_root(thread_id)
            raise ClientError("NOT_LIVE", f'thread "{thread_id}" is not live here: resume it first')
        return self._root(agent)

    def _root(self, agent: Agent) -> Agent:
        if agent.session.header.parent_session is not None:
            raise _not_a_root(agent.id)
        return agent

    async def open(self, thread_id: str, *, held: bool = False) -> Agent:
        """The root ``thread_id``: the live one, the stored one resumed, else a new one with
        that id (for a front end that names its roots). ``held``: it runs no turn
        (``Agent.hold``), for a root that a program outside the host speaks for — which
        also answers for it, so its stored descendants waiting on the user are left for it
        to resume (``SubagentService.resume_waiting``) once it can be asked."""
        live = self._host.services.agents.get(thread_id)
        if live is not None:
            return self._root(live)
        agents = self._host.services.agents
        setup = [_hold] if held else []
        try:
            header = await self.header(thread_id)
        except ClientError as error:
            if error.code != "UNKNOWN_THREAD":
                raise
            created: Agent = await agents.create(
                SessionHeader(id=thread_id), label=ROOT_LABEL, setup=setup
            )
            return created
        if header.parent_session is not None:
            raise _not_a_root(thread_id)
        return await self._resume(header, ROOT_LABEL, setup, wake=not held)

    async def header(self, session_id: str) -> SessionHeader:
        """The header of a live or stored session; ``UNKNOWN_THREAD`` for neither."""
        live = self._host.services.sessions.get(session_id)
        if live is not None:
            return live.header  # type: ignore[no-any-return]
        return (await inspect(self._host, session_id)).header  # type: ignore[no-any-return]

    # -- turns -----------------------------------------------------------------------------

    async def followup(self, thread_id: str, text: str) -> tuple[str, str]:
        """Queue ``text`` as the root's next turn: the accepted message's id, and the id of
        the turn that will take it."""
        root = await self.live_root(thread_id)
        message_id = root.followup(text)
        return message_id, root.inbox.reserve_turn(message_id)

    async def steer(self, thread_id: str, text: str) -> str:
        """Join the root's running turn at its next step (or start one); the message's id."""
        return (await self.live_root(thread_id)).steer(text)

    async def interrupt(self, thread_id: str) -> None:
        """Stop the root's current turn (queued messages stay parked)."""
        (await self.live_root(thread_id)).interrupt()

    # -- reading ---------------------------------------------------------------------------

    async def read(
        self, session_id: str, *, after_seq: int = -1, limit: int | None = None
    ) -> Transcript:
        """The items of any session (live or stored) after ``after_seq``, at most about
        ``limit`` (whole events), and the last ``seq`` read: reading on from it misses
        nothing."""
        events = await events_of(self._host, session_id)
        items: list[Item] = []
        last = max(after_seq, -1)
        for event in events:
            if event.seq <= after_seq:
                continue
            if limit is not None and len(items) >= limit:
                break
            items.extend(items_of(event, session_id))
            last = event.seq
        return Transcript(items, last)

    # -- the subagent tree -----------------------------------------------------------------

    async def subagents(self, thread_id: str, scope: ListScope) -> tuple[str, list[dict[str, Any]]]:
        """The root's subagents as ``list_agents`` shows them: its text and its rows."""
        root = await self.live_root(thread_id)
        entries = await entries_of(self._subagents(), root.id, scope)
        approvals = self._host.services.find("approvals")
        waiting = approvals.waiting(root) if approvals is not None else set()
        rows = rows_of(entries, self._host.services.agents, scope, waiting)
        return listing_text(rows), rows

    async def send(self, thread_id: str, subagent_id: str, text: str) -> str:
        """Send ``text`` to the root's direct subagent as ``send_message`` would; the message
        id. A failure's message is ``send_message``'s error text."""
        from host.subagents.types import MessageSource

        root = await self.live_root(thread_id)
        source = MessageSource("coordinator", root.id).as_dict()
        try:
            message_id: str = await self._subagents().followup(
                root, subagent_id, text, source=source
            )
        except HostError as error:
            raise ClientError(error.code, NOT_DELIVERED + error.message) from None
        return message_id

    async def interrupt_subagent(self, thread_id: str, subagent_id: str) -> None:
        """Stop a descendant's current turn, as ``interrupt_agent`` would."""
        root = await self.live_root(thread_id)
        subagents = self._subagents()
        subagents.interrupt(subagent_id, caller=root)
        await subagents.cancel_waiting(subagent_id, caller=root)

    def _subagents(self) -> Any:
        service = self._host.services.find("subagents")
        if service is None:
            raise ClientError("SERVICE_UNAVAILABLE", "no subagent service (is it blocked?)")
        return service


async def inspect(host: RunningHost, session_id: str) -> Any:
    """The stored log of ``session_id`` (``UNKNOWN_THREAD`` when nothing is stored)."""
    persistence: Any = host.services.find("session_persistence")
    if persistence is None:
        raise ClientError("UNKNOWN_THREAD", f'no thread "{session_id}" (no persistence)')
    try:
        return await persistence.inspect(session_id)
    except PersistenceError as error:
        if error.code == PersistenceError.NOT_FOUND:
            raise ClientError("UNKNOWN_THREAD", f'no thread "{session_id}"') from None
        raise


async def events_of(host: RunningHost, session_id: str) -> Sequence[Event]:
    """The events of a session: the live one's, else the stored log's (``inspect``)."""
    live = host.services.sessions.get(session_id)
    if live is not None:
        return list(live.events)
    return list((await inspect(host, session_id)).events)


def _not_a_root(session_id: str) -> ClientError:
    return ClientError("NOT_A_ROOT", f'"{session_id}" is a subagent\'s session, not a thread')
