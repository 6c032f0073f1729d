"""Agents: the model protocol, the scripted model, prompt sections, the inbox, the driver,
the ``Agent`` and the ``agents`` service (``AgentRegistry``).

Names are imported from their modules on first use, so importing one small module of this
package (e.g. ``host.agents.prompt``) does not load the whole runtime.
"""

from __future__ import annotations

from host.lazy import lazy_attributes

_SOURCES = {
    "Agent": "host.agents.agent",
    "AgentExistsError": "host.agents.registry",
    "AgentOptions": "host.agents.registry",
    "AgentRegistry": "host.agents.registry",
    "AgentSession": "host.agents.agent",
    "AgentSetup": "host.agents.registry",
    "AgentStatus": "host.agents.agent",
    "CommitCheck": "host.agents.registry",
    "DEFAULT_MAX_STEPS": "host.agents.agent",
    "Inbox": "host.agents.inbox",
    "InboxClosedError": "host.agents.inbox",
    "InboxMessage": "host.agents.inbox",
    "MessageId": "host.agents.inbox",
    "Model": "host.agents.models",
    "ModelError": "host.agents.models",
    "ModelRegistry": "host.agents.models",
    "ModelRequest": "host.agents.models",
    "ModelResponse": "host.agents.models",
    "PromptSection": "host.agents.prompt",
    "ScriptedModel": "host.agents.scripted",
    "SectionView": "host.agents.prompt",
    "SetupStep": "host.agents.registry",
    "ToolSpec": "host.agents.models",
    "TurnEndListener": "host.agents.driver",
    "TurnOutcome": "host.agents.driver",
    "Usage": "host.agents.models",
    "call": "host.agents.scripted",
    "calls": "host.agents.scripted",
    "register_section": "host.agents.prompt",
    "say": "host.agents.scripted",
    "section_registry": "host.agents.prompt",
    "tool_call": "host.agents.scripted",
}

__getattr__ = lazy_attributes(__name__, _SOURCES)

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
