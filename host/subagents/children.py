"""Composing a child: its header, seed, descriptor, tool filter, persona and model.

A child of ``parent`` gets ``origin="subagent"``, ``parent_session=parent.id`` and the parent's
``delegation_depth + 1`` (checked against the provider's depth limit before anything is built).
A ``fork`` child is seeded with the parent's events (``seed_length`` = their count); inbox
bookkeeping (``inbox/accepted``/``inbox/claimed``) is left out of the seed, so the parent's
pending messages are never replayed into the child on a cold resume.

The child's tools are the global tools through its filter: the provider's and the request's
filters combined (a tool must match every ``allow`` list, ``deny`` lists add up). Its persona
(request first, then provider) is an own prompt section, its model is the request's (None: the
default). A child with a memory (its profile's) gets the memory tools in its own scope and the
memory section after the persona (``host.memory.tools``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import attrs

from host.agents.agent import DEFAULT_MAX_STEPS, Agent
from host.agents.prompt import PromptSection, register_section
from host.agents.registry import AgentSetup, SetupStep
from host.disposal import Disposer, dispose_all
from host.sessions.model import (
    EventBody,
    InboxAccepted,
    InboxClaimed,
    SessionHeader,
    SubagentDescriptorEvent,
    new_id,
)
from host.subagents.descriptors import (
    VERSION,
    ContinuableDescriptor,
    MemorySpec,
    OneShotDescriptor,
    descriptor_data,
)
from host.subagents.providers import check_depth
from host.subagents.types import ORIGIN, ChildRequest, Provider
from host.tools.filter import SubPluginLimit, ToolFilter

PERSONA_SECTION = "subagent/persona"


@attrs.frozen
class ChildPlan:
    """Everything needed to create one child, resolved before anything is published."""

    header: SessionHeader
    seed: tuple[EventBody, ...]
    label: str | None
    model: str | None
    persona: str | None
    tool_filter: ToolFilter | None
    max_steps: int
    requested_max_steps: int | None = None
    profile: str | None = None
    mcp_servers: list[str] | None = None
    memory: MemorySpec | None = None


def plan_child(
    provider: Provider, request: ChildRequest, parent: Agent, *, label: str | None
) -> ChildPlan:
    """Resolve a child of ``parent``; ``DEPTH_EXCEEDED`` before anything is built."""
    depth = parent.session.header.delegation_depth + 1
    check_depth(provider, depth)
    seed = fork_seed(parent.session.events) if provider.seeding == "fork" else ()
    header = SessionHeader(
        id=new_id("sub_"),
        parent_session=parent.id,
        origin=ORIGIN,
        delegation_depth=depth,
        seed_length=len(seed),
    )
    capabilities = provider.capabilities
    return ChildPlan(
        header=header,
        seed=seed,
        label=label,
        model=request.model,
        persona=request.persona if request.persona is not None else capabilities.persona,
        tool_filter=combine_filters(capabilities.tool_filter, request.tool_filter),
        max_steps=request.max_steps if request.max_steps is not None else DEFAULT_MAX_STEPS,
        requested_max_steps=request.max_steps,
        profile=request.profile,
        mcp_servers=request.mcp_servers,
        memory=request.memory,
    )


def fork_seed(events: Sequence[object]) -> tuple[EventBody, ...]:
    """The parent's event bodies a fork child starts from (inbox bookkeeping left out)."""
    bodies: list[EventBody] = []
    for event in events:
        body = getattr(event, "body", None)
        if body is None or isinstance(body, InboxAccepted | InboxClaimed):
            continue
        bodies.append(body)
    return tuple(bodies)


def combine_filters(first: ToolFilter | None, second: ToolFilter | None) -> ToolFilter | None:
    """Both filters at once: a tool must match each ``allow`` list (globs cannot be
    intersected: the second list becomes an ``also_allow``), ``deny`` adds up, and so do the
    sub-plugin limits (two limits of one parent intersect)."""
    if first is None:
        return second
    if second is None:
        return first
    allows: list[tuple[str, ...]] = []
    for given in (first, second):
        for globs in (given.allow, *(given.also_allow or ())):
            if globs is not None and globs not in allows:
                allows.append(globs)
    deny = tuple(dict.fromkeys([*(first.deny or ()), *(second.deny or ())]))
    limits = combine_limits([*(first.sub_plugins or ()), *(second.sub_plugins or ())])
    return ToolFilter(
        allow=allows[0] if allows else None,
        deny=deny or None,
        sub_plugins=limits or None,
        also_allow=allows[1:] or None,
    )


def combine_limits(limits: Sequence[SubPluginLimit]) -> list[SubPluginLimit]:
    """One limit per parent, in first-seen order; a parent's names lists intersect."""
    merged: dict[str, list[str]] = {}
    for limit in limits:
        if limit.parent in merged:
            merged[limit.parent] = [n for n in merged[limit.parent] if n in limit.names]
        else:
            merged[limit.parent] = list(dict.fromkeys(limit.names))
    return [SubPluginLimit(parent, names) for parent, names in merged.items()]


def composition_step(persona: str | None, memory: MemorySpec | None = None) -> SetupStep:
    """Base composition: the persona as the child's own prompt section (if any), then its
    memory (if any): the memory tools and section."""

    def install(setup: AgentSetup) -> Disposer:
        disposers: list[Disposer] = []
        if persona:
            section = PromptSection(PERSONA_SECTION, persona)
            disposers.append(register_section(setup.sections, section, owner="subagents"))
        if memory is not None:
            from host.memory.tools import install as install_memory

            try:
                disposers.append(install_memory(setup, Path(memory.directory), memory.scope))
            except BaseException:
                dispose_all(disposers, f"undoing the persona of {setup.id} failed")
                raise
        return lambda: dispose_all(disposers, f"removing the composition of {setup.id} failed")

    return install


def one_shot_descriptor(provider: Provider, plan: ChildPlan) -> OneShotDescriptor:
    """The descriptor a one-shot child records in its first turn."""
    return OneShotDescriptor(
        version=VERSION, mode="one-shot", provider=provider.name, label=plan.label
    )


def continuable_descriptor(
    provider: Provider, plan: ChildPlan, label: str
) -> ContinuableDescriptor:
    """The descriptor a continuable child is seeded with (everything resume rebuilds from)."""
    return ContinuableDescriptor(
        version=VERSION,
        mode="continuable",
        provider=provider.name,
        label=label,
        model=plan.model,
        persona=plan.persona,
        tool_filter=plan.tool_filter,
        max_steps=plan.requested_max_steps,
        profile=plan.profile,
        mcp_servers=plan.mcp_servers,
        memory=plan.memory,
    )


def resume_max_steps(descriptor: ContinuableDescriptor) -> int:
    """The step limit a resumed child runs with: its descriptor's, else the default."""
    return descriptor.max_steps if descriptor.max_steps is not None else DEFAULT_MAX_STEPS


def descriptor_event(
    descriptor: OneShotDescriptor | ContinuableDescriptor,
) -> SubagentDescriptorEvent:
    """The model-hidden event holding ``descriptor``'s JSON form."""
    return SubagentDescriptorEvent(descriptor_data(descriptor))
