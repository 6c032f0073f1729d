"""Agents: the model protocol, the scripted model, prompt sections, the inbox, the driver,
the ``Agent`` and the ``agents`` service (``AgentRegistry``)."""

from host.agents.agent import DEFAULT_MAX_STEPS, Agent, AgentSession, AgentStatus
from host.agents.driver import TurnEndListener, TurnOutcome
from host.agents.inbox import Inbox, InboxClosedError, InboxMessage, MessageId
from host.agents.models import (
    Model,
    ModelError,
    ModelRegistry,
    ModelRequest,
    ModelResponse,
    ToolSpec,
    Usage,
)
from host.agents.prompt import PromptSection, SectionView, register_section, section_registry
from host.agents.registry import (
    AgentExistsError,
    AgentOptions,
    AgentRegistry,
    AgentSetup,
    CommitCheck,
    SetupStep,
)
from host.agents.scripted import ScriptedModel, call, calls, say, tool_call

__all__ = [
    "DEFAULT_MAX_STEPS",
    "Agent",
    "AgentExistsError",
    "AgentOptions",
    "AgentRegistry",
    "AgentSession",
    "AgentSetup",
    "AgentStatus",
    "CommitCheck",
    "Inbox",
    "InboxClosedError",
    "InboxMessage",
    "MessageId",
    "Model",
    "ModelError",
    "ModelRegistry",
    "ModelRequest",
    "ModelResponse",
    "PromptSection",
    "ScriptedModel",
    "SectionView",
    "SetupStep",
    "ToolSpec",
    "TurnEndListener",
    "TurnOutcome",
    "Usage",
    "call",
    "calls",
    "register_section",
    "say",
    "section_registry",
    "tool_call",
]
