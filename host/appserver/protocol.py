"""The app-server's protocol types: each method's params and result, and the server's requests
to a client, as attrs classes crossing the wire through the host's one converter with
camelCase keys (unknown keys refused: an invalid-params error). The notifications are the
feed's events (``host.clients.events``). ``schema`` generates the JSON Schema from these very
classes.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs

from host.clients.events import Origin
from host.clients.items import Item
from host.serialization import camel_case
from host.subagents.rows import ListScope

PROTOCOL_VERSION = "1"


@camel_case
@attrs.frozen
class ClientInfo:
    """Who the client is."""

    name: str
    version: str


@camel_case
@attrs.frozen
class Capabilities:
    """What the client can answer: approval requests, ``ask_user`` questions."""

    approvals: bool = False
    user_input: bool = False


@camel_case
@attrs.frozen
class InitializeParams:
    """``initialize``: the first request of a connection."""

    client_info: ClientInfo
    capabilities: Capabilities = Capabilities()


@camel_case
@attrs.frozen
class ServerInfo:
    """Who the server is."""

    name: str
    version: str


@camel_case
@attrs.frozen
class InitializeResult:
    """The server and the protocol's version."""

    server_info: ServerInfo
    protocol_version: str


@camel_case
@attrs.frozen
class Thread:
    """A thread: a root agent's session."""

    id: str
    label: str | None
    created_at: int


@camel_case
@attrs.frozen
class ThreadStartParams:
    """``thread/start``: a new root agent (``label``: its label, recorded in its log;
    ``profile``: the profile it is started from, recorded too and applied again at every
    resume; ``model``: a registered model's name, over the profile's)."""

    label: str | None = None
    profile: str | None = None
    model: str | None = None


@camel_case
@attrs.frozen
class ThreadResult:
    """A thread, the last ``seq`` of its log (live events follow it), and whether a turn of
    it runs (one started, by any client, and not completed)."""

    thread: Thread
    last_seq: int
    running: bool


@camel_case
@attrs.frozen
class ThreadResumeParams:
    """``thread/resume``: a stored root made live here; with ``after_seq``, its stored items
    after that ``seq`` are replayed as notifications first."""

    thread_id: str
    after_seq: int | None = None


@camel_case
@attrs.frozen
class ThreadListParams:
    """``thread/list``: roots, the most recently active first, ``limit`` at a time from
    ``cursor`` (a page's ``next_cursor``)."""

    cursor: str | None = None
    limit: int = 50


@camel_case
@attrs.frozen
class ListedThread:
    """A thread as ``thread/list`` lists it: also its tree's last activity (ns since the
    epoch) and whether it is live in this server."""

    id: str
    label: str | None
    created_at: int
    last_activity: int
    live: bool


@camel_case
@attrs.frozen
class ThreadListResult:
    """A page of threads; ``next_cursor`` is None on the last."""

    threads: list[ListedThread]
    next_cursor: str | None


@camel_case
@attrs.frozen
class ThreadReadParams:
    """``thread/read``: any session's items after ``after_seq``."""

    thread_id: str
    after_seq: int = -1
    limit: int | None = None


@camel_case
@attrs.frozen
class ThreadReadResult:
    """Items, and the last ``seq`` they cover (subscribe after it: no gap, no duplicate)."""

    items: list[Item]
    last_seq: int


@camel_case
@attrs.frozen
class ThreadSubscribeParams:
    """``thread/subscribe``: follow any session read-only, replaying after ``after_seq``."""

    thread_id: str
    after_seq: int | None = None


@camel_case
@attrs.frozen
class ThreadIdParams:
    """Params naming a thread only (``thread/unsubscribe``, ``turn/interrupt``)."""

    thread_id: str


@camel_case
@attrs.frozen
class TextInput:
    """A piece of input: text."""

    type: Literal["text"]
    text: str


@camel_case
@attrs.frozen
class TurnParams:
    """``turn/start`` (a followup: the root's next turn) and ``turn/steer`` (joins the running
    turn at its next step)."""

    thread_id: str
    input: list[TextInput]


@camel_case
@attrs.frozen
class Turn:
    """A turn of a thread (its ``turn/started`` and ``turn/completed`` carry this id)."""

    id: str


@camel_case
@attrs.frozen
class TurnStartResult:
    """``turn/start``: the turn that will take the message (it starts once the turns queued
    before it ended), and the accepted message's id."""

    turn: Turn
    message_id: str


@camel_case
@attrs.frozen
class TurnResult:
    """``turn/steer``: the accepted message; the turn that takes it (the running one, else
    the next) is announced by ``turn/started``."""

    message_id: str


@camel_case
@attrs.frozen
class SubagentListParams:
    """``subagent/list``: the root's subagents as ``list_agents`` lists them."""

    thread_id: str
    scope: ListScope = "children"


@camel_case
@attrs.frozen
class SubagentListResult:
    """``list_agents``' text and its structured rows."""

    text: str
    rows: list[dict[str, Any]]


@camel_case
@attrs.frozen
class SubagentSendParams:
    """``subagent/send``: a message to the root's direct subagent (as ``send_message``)."""

    thread_id: str
    subagent_id: str
    text: str


@camel_case
@attrs.frozen
class SubagentSendResult:
    """``send_message``'s text and the message id."""

    text: str
    message_id: str


@camel_case
@attrs.frozen
class SubagentInterruptParams:
    """``subagent/interrupt``: stop a descendant's turn (as ``interrupt_agent``)."""

    thread_id: str
    subagent_id: str


@camel_case
@attrs.frozen
class SubagentInterruptResult:
    """``interrupt_agent``'s text."""

    text: str
    accepted: bool


@camel_case
@attrs.frozen
class NoParams:
    """No params."""


@camel_case
@attrs.frozen
class Empty:
    """An empty result."""


@camel_case
@attrs.frozen
class RowsResult:
    """``plugins/list``, ``tools/list``: rows as the CLI's ``--json`` has them."""

    rows: list[dict[str, Any]]


@camel_case
@attrs.frozen
class ModelsResult:
    """``models/list``: the registered models and the default."""

    models: list[str]
    default: str | None


@camel_case
@attrs.frozen
class ApprovalRequestParams:
    """Server → client ``approval/request``: may this tool call run?"""

    thread_id: str
    request_id: str
    origin: Origin
    tool: str
    arguments: Any


@camel_case
@attrs.frozen
class ApprovalResponse:
    """The client's decision."""

    decision: Literal["approve", "approveForSession", "deny"]
    reason: str | None = None


@camel_case
@attrs.frozen
class UserInputRequestParams:
    """Server → client ``userInput/request``: an agent's ``ask_user`` question."""

    thread_id: str
    request_id: str
    origin: Origin
    question: str
    choices: list[str] | None = None


@camel_case
@attrs.frozen
class UserInputResponse:
    """The client's answer, or its refusal to answer."""

    answer: str | None = None
    decline: bool = False
    reason: str | None = None
