"""The typed plugin author API: what a hook's arguments are, for ``mypy --strict``.

A plugin annotates its hook implementations with these names, and a type checker then catches
a wrong call (``register(42)`` in ``register_tools``, a misspelt service, a wrong argument to
``ctx.subagents.start``)::

    from host.api import RegisterTool, ServiceContext, hookimpl

    @hookimpl
    def register_tools(register: RegisterTool, ctx: ServiceContext) -> None:
        ...

The ``register`` callbacks (one per hook) are Protocols that mirror the host's callbacks,
defined beside their hooks (``host.plugins.hookspecs``, ``host.profiles.hookspecs``) and
re-exported here; ``ServiceContext`` is the service context (``host.services.
Services`` at run time) with the built-in services typed as attributes. None of this changes
what happens at run time: the services are still looked up by name when an attribute is read.
The names are also importable from ``host`` (loaded on first use there, so ``import host``
stays cheap).

Services a plugin (not the host) provides are reached by name: ``ctx.get("mcp")`` (strict) or
``ctx.find("mcp")`` (None when absent); both return ``Any``, or, given the class,
``ctx.get("notes", Notebook)`` a ``Notebook`` (checked: ``TypeError`` naming the service when
it is not one).

This module is also the door through which plugins reach the rest of the host: a plugin imports
``host``, ``host.api`` and ``host.tools`` only (``tests/test_layering.py``). The values the
first-party plugins use (``HostError``, ``ChildRequest``, ``Profile``, ``AgentSetup``, the
session log's events, …) are named in ``_DEFINED_IN`` and imported from their modules on first
use. It imports nothing at run time that imports it back: the modules below it type their
arguments with it only under ``TYPE_CHECKING``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, TypeVar, overload

from host.disposal import Disposer, Scope
from host.lazy import lazy_attributes
from host.plugins.handles import PluginHandle
from host.plugins.hookspecs import (
    RegisterModel,
    RegisterPlugin,
    RegisterPromptSection,
    RegisterService,
    RegisterTool,
    hookimpl,
)
from host.profiles.library import RegisterProfile

T = TypeVar("T")

_DEFINED_IN = {
    "Agent": "host.agents.agent",
    "AgentRegistry": "host.agents.registry",
    "AgentSetup": "host.agents.registry",
    "Answer": "host.approvals.requests",
    "ApprovalRequest": "host.approvals.requests",
    "CancelSignal": "host.cancel",
    "ChildMode": "host.subagents.types",
    "ChildRequest": "host.subagents.types",
    "ClientEvent": "host.clients.events",
    "CodecError": "host.sessions.codec",
    "Commands": "host.clients.commands",
    "ConfigError": "host.errors",
    "Contribution": "host.subagents.setup",
    "Event": "host.sessions.model",
    "Feed": "host.clients.feed",
    "FileRefused": "host.project_files",
    "HostError": "host.errors",
    "HostSettings": "host.settings",
    "INTERRUPTED_TOOL_TEXT": "host.agents.tool_results",
    "InboxAccepted": "host.sessions.model",
    "Lazy": "host.services",
    "ListScope": "host.subagents.rows",
    "MessageEvent": "host.sessions.model",
    "MessageSource": "host.subagents.types",
    "ModelDelta": "host.agents.models",
    "ModelRequest": "host.agents.models",
    "ModelResponse": "host.agents.models",
    "NOTICES": "host.clients.items",
    "Owner": "host.naming",
    "PREFIX_CHARS": "host.agents.text_calls",
    "PersistenceError": "host.sessions.persistence",
    "Profile": "host.profiles.model",
    "ProfileError": "host.profiles.model",
    "ProfileSet": "host.profiles.model",
    "PromptSection": "host.agents.prompt",
    "QUEUED_PREFIX": "host.sessions.remote",
    "RemoteMessage": "host.sessions.remote",
    "ReportDelivery": "host.subagents.types",
    "Resumed": "host.sessions.persistence",
    "RunningHost": "host.clients.commands",
    "RunResult": "host.subagents.types",
    "SESSION_ID_PATTERN": "host.sessions.model",
    "Session": "host.sessions.store",
    "SessionHeader": "host.sessions.model",
    "SessionStore": "host.sessions.store",
    "StoredSession": "host.sessions.persistence",
    "StreamEvent": "host.agents.models",
    "SubagentStarted": "host.clients.events",
    "SubagentStatus": "host.clients.events",
    "TextDelta": "host.agents.models",
    "ToolCall": "host.sessions.model",
    "ToolCallDelta": "host.agents.models",
    "ToolFilter": "host.tools.filter",
    "ToolSpec": "host.agents.models",
    "TurnEnd": "host.sessions.model",
    "TurnStart": "host.sessions.model",
    "Usage": "host.agents.models",
    "Voice": "host.sessions.persistence",
    "check_model": "host.profiles.applying",
    "check_servers": "host.profiles.applying",
    "combine_filters": "host.subagents.children",
    "could_be_call": "host.agents.text_calls",
    "decode_event": "host.sessions.codec",
    "decode_header": "host.sessions.codec",
    "dispose_errors": "host.disposal",
    "encode_append": "host.sessions.persistence",
    "encode_event": "host.sessions.codec",
    "encode_header": "host.sessions.codec",
    "entries_of": "host.subagents.rows",
    "items_of": "host.clients.items",
    "listing_text": "host.subagents.rows",
    "matches": "host.tools.globs",
    "memory_of": "host.profiles.applying",
    "new_id": "host.sessions.model",
    "no_terminal": "host.approvals.requests",
    "open_regular": "host.project_files",
    "own_filter": "host.profiles.applying",
    "prepare_decoding": "host.sessions.codec",
    "raise_if_cancelled": "host.cancel",
    "read_listed": "host.project_files",
    "read_regular": "host.project_files",
    "replace_file": "host.atomic",
    "resolve": "host.profiles.matching",
    "roll_back": "host.disposal",
    "rows_of": "host.subagents.rows",
    "run_tool": "host.tools.execute",
    "shown": "host.profiles.model",
    "structure_config": "host.plugins.config",
    "unstructure": "host.serialization",
    "user_config_file": "host.approvals.policy",
    "validate": "host.schema",
    "validate_session_id": "host.sessions.model",
}
"""What first-party plugins use of the host beyond the hooks (``__all__``, which ``host``
re-exports), by the module that defines it; imported from there when first asked for
(``__getattr__``), so ``import host.api`` stays cheap."""

_MODULES = {"text_calls": "host.agents.text_calls", "workers": "host.sessions.workers"}
"""Modules first-party plugins use whole, imported the same way: ``text_calls`` (a model's
tool calls written as text) and ``workers`` (the session store's worker threads)."""

if TYPE_CHECKING:  # annotations only: importing this module builds no service
    # the services' types; and the names of ``_DEFINED_IN`` and ``_MODULES`` (``__getattr__``)
    from host.agents import text_calls as text_calls
    from host.agents.agent import Agent as Agent
    from host.agents.models import ModelDelta as ModelDelta
    from host.agents.models import ModelRegistry
    from host.agents.models import ModelRequest as ModelRequest
    from host.agents.models import ModelResponse as ModelResponse
    from host.agents.models import StreamEvent as StreamEvent
    from host.agents.models import TextDelta as TextDelta
    from host.agents.models import ToolCallDelta as ToolCallDelta
    from host.agents.models import ToolSpec as ToolSpec
    from host.agents.models import Usage as Usage
    from host.agents.prompt import PromptSection as PromptSection
    from host.agents.registry import AgentRegistry as AgentRegistry
    from host.agents.registry import AgentSetup as AgentSetup
    from host.agents.text_calls import PREFIX_CHARS as PREFIX_CHARS
    from host.agents.text_calls import could_be_call as could_be_call
    from host.agents.tool_results import INTERRUPTED_TOOL_TEXT as INTERRUPTED_TOOL_TEXT
    from host.approvals.policy import user_config_file as user_config_file
    from host.approvals.requests import Answer as Answer
    from host.approvals.requests import ApprovalRequest as ApprovalRequest
    from host.approvals.requests import no_terminal as no_terminal
    from host.approvals.service import ApprovalService
    from host.atomic import replace_file as replace_file
    from host.cancel import CancelSignal as CancelSignal
    from host.cancel import raise_if_cancelled as raise_if_cancelled
    from host.clients.commands import Commands as Commands
    from host.clients.commands import RunningHost as RunningHost
    from host.clients.events import ClientEvent as ClientEvent
    from host.clients.events import SubagentStarted as SubagentStarted
    from host.clients.events import SubagentStatus as SubagentStatus
    from host.clients.feed import Feed as Feed
    from host.clients.items import NOTICES as NOTICES
    from host.clients.items import items_of as items_of
    from host.disposal import dispose_errors as dispose_errors
    from host.disposal import roll_back as roll_back
    from host.errors import ConfigError as ConfigError
    from host.errors import HostError as HostError
    from host.naming import NamedRegistry
    from host.naming import Owner as Owner
    from host.plugins.config import structure_config as structure_config
    from host.plugins.handles import PluginStates
    from host.profiles.applying import check_model as check_model
    from host.profiles.applying import check_servers as check_servers
    from host.profiles.applying import memory_of as memory_of
    from host.profiles.applying import own_filter as own_filter
    from host.profiles.library import ProfileLibrary
    from host.profiles.matching import resolve as resolve
    from host.profiles.model import Profile as Profile
    from host.profiles.model import ProfileError as ProfileError
    from host.profiles.model import ProfileSet as ProfileSet
    from host.profiles.model import shown as shown
    from host.project_files import FileRefused as FileRefused
    from host.project_files import open_regular as open_regular
    from host.project_files import read_listed as read_listed
    from host.project_files import read_regular as read_regular
    from host.schema import validate as validate
    from host.serialization import unstructure as unstructure
    from host.services import Lazy as Lazy
    from host.sessions import workers as workers
    from host.sessions.codec import CodecError as CodecError
    from host.sessions.codec import decode_event as decode_event
    from host.sessions.codec import decode_header as decode_header
    from host.sessions.codec import encode_event as encode_event
    from host.sessions.codec import encode_header as encode_header
    from host.sessions.codec import prepare_decoding as prepare_decoding
    from host.sessions.model import SESSION_ID_PATTERN as SESSION_ID_PATTERN
    from host.sessions.model import Event as Event
    from host.sessions.model import InboxAccepted as InboxAccepted
    from host.sessions.model import MessageEvent as MessageEvent
    from host.sessions.model import SessionHeader as SessionHeader
    from host.sessions.model import ToolCall as ToolCall
    from host.sessions.model import TurnEnd as TurnEnd
    from host.sessions.model import TurnStart as TurnStart
    from host.sessions.model import new_id as new_id
    from host.sessions.model import validate_session_id as validate_session_id
    from host.sessions.persistence import PersistenceError as PersistenceError
    from host.sessions.persistence import Resumed as Resumed
    from host.sessions.persistence import SessionPersistence
    from host.sessions.persistence import StoredSession as StoredSession
    from host.sessions.persistence import Voice as Voice
    from host.sessions.persistence import encode_append as encode_append
    from host.sessions.projections import Projections
    from host.sessions.remote import QUEUED_PREFIX as QUEUED_PREFIX
    from host.sessions.remote import RemoteMessage as RemoteMessage
    from host.sessions.store import Session as Session
    from host.sessions.store import SessionStore as SessionStore
    from host.settings import HostSettings as HostSettings
    from host.subagents.children import combine_filters as combine_filters
    from host.subagents.rows import ListScope as ListScope
    from host.subagents.rows import entries_of as entries_of
    from host.subagents.rows import listing_text as listing_text
    from host.subagents.rows import rows_of as rows_of
    from host.subagents.service import SubagentService
    from host.subagents.setup import Contribution as Contribution
    from host.subagents.types import ChildMode as ChildMode
    from host.subagents.types import ChildRequest as ChildRequest
    from host.subagents.types import MessageSource as MessageSource
    from host.subagents.types import ReportDelivery as ReportDelivery
    from host.subagents.types import RunResult as RunResult
    from host.tools.execute import run_tool as run_tool
    from host.tools.filter import ToolFilter as ToolFilter
    from host.tools.globs import matches as matches
    from host.tools.tool import Tool
    from host.tools.workers import ToolWorkers

__all__ = [
    "Disposer",
    "PluginHandle",
    "RegisterModel",
    "RegisterPlugin",
    "RegisterProfile",
    "RegisterPromptSection",
    "RegisterService",
    "RegisterTool",
    "Scope",
    "ServiceContext",
    "hookimpl",
]


class ServiceContext(Protocol):
    """The service context a hook receives as ``ctx`` (and a tool as ``ToolExec.ctx``).

    The attributes are the host's own services; reading one that is absent raises
    ``host.services.ServiceUnavailable``. A plugin's ``requires`` says which must be present
    for it to activate. Other services are looked up by name with ``get`` or ``find``.
    """

    @property
    def settings(self) -> HostSettings:
        """Where the host keeps its data (``data_dir``) and reads its configuration."""
        ...

    @property
    def tools(self) -> NamedRegistry[Tool]:
        """The global tools (registered through ``register_tools``)."""
        ...

    @property
    def prompt_sections(self) -> NamedRegistry[PromptSection]:
        """The global prompt sections (registered through ``register_prompt_sections``)."""
        ...

    @property
    def profiles(self) -> ProfileLibrary:
        """The subagent profiles: shipped by plugins, and the user's and project's files."""
        ...

    @property
    def tool_workers(self) -> ToolWorkers:
        """The host's bounded pool that plain ``def`` tools run on (``host.tools.workers``)."""
        ...

    @property
    def plugins(self) -> PluginStates:
        """Every plugin's state: ``state(name)``, ``is_active(name)``."""
        ...

    @property
    def session_persistence(self) -> SessionPersistence:
        """Where sessions are stored (the embedded JSONL files, or a plugin's database)."""
        ...

    @property
    def projections(self) -> Projections:
        """The projection units that live sessions fold on append."""
        ...

    @property
    def sessions(self) -> SessionStore:
        """The live sessions."""
        ...

    @property
    def models(self) -> ModelRegistry:
        """The models, by name (``resolve(name)``; the keyless ``scripted`` one built in)."""
        ...

    @property
    def agents(self) -> AgentRegistry:
        """The live agents, by id; creates and resumes agents."""
        ...

    @property
    def subagents(self) -> SubagentService:
        """The subagent service (docs/subagents.md): start, follow up, interrupt, list, report."""
        ...

    @property
    def approvals(self) -> ApprovalService:
        """Asks the root's user about calls that need consent, and ``ask_user`` questions."""
        ...

    @overload
    def get(self, name: str) -> Any: ...

    @overload
    def get(self, name: str, kind: type[T]) -> T: ...

    def get(self, name: str, kind: type[T] | None = None) -> Any:
        """The service ``name``; raises ``ServiceUnavailable`` when absent. With ``kind``
        (``ctx.get("notes", Notebook)``) it is typed as a ``kind``, and ``TypeError`` naming
        the service says when it is not one."""
        ...

    @overload
    def find(self, name: str) -> Any | None: ...

    @overload
    def find(self, name: str, kind: type[T]) -> T | None: ...

    def find(self, name: str, kind: type[T] | None = None) -> Any | None:
        """The service ``name``, or None when absent; with ``kind``, typed as a ``kind``
        (``TypeError`` when it is not one)."""
        ...

    def built(self, name: str) -> Any | None:
        """The service ``name`` if it exists and is built; never builds a lazy one."""
        ...

    def has(self, name: str) -> bool:
        """True while ``name`` is registered."""
        ...

    def provider(self, name: str) -> str | None:
        """The plugin that registered ``name``."""
        ...

    def names(self) -> list[str]:
        """Registered service names in registration order."""
        ...


__getattr__ = lazy_attributes(__name__, _DEFINED_IN, modules=_MODULES)
"""A name of ``_DEFINED_IN`` or ``_MODULES``, imported on first use."""
