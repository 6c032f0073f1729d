"""Subagent descriptors (version 2): the model-hidden identity a child records in its own log.

``parse_descriptor`` maps any JSON value to a descriptor, ``Corrupt`` or ``Unsupported`` and
never raises. The version is checked first, so a newer writer (``unsupported``) can be told
apart from damage (``corrupt``); content is then validated strictly (no coercion, unknown keys
rejected) and structured in one cattrs step.

A tool filter (``host.tools.filter.ToolFilter``, whose fields are its keys) writes only the keys
it was given; its ``also_allow`` is an optional key too (more allow lists a tool must match).
A continuable descriptor's ``max_steps``, ``profile``, ``mcp_servers`` and ``memory`` are
optional keys of version 2 (a descriptor written before them stays valid): the step limit the
child was started with (absent: the default), the profile it was started from and that
profile's memory directory, so a cold resume keeps them after the profile file changes or
disappears. ``max_steps`` below 1 and a memory directory that is not an absolute path are
``corrupt``.
"""

from __future__ import annotations

import os
from typing import Any, Literal, cast

import attrs
import cattrs

from host.schema import schema_for, validate
from host.serialization import converter
from host.tools.filter import ToolFilter

VERSION = 2


MemoryScope = Literal["user", "project", "local"]


@attrs.frozen
class MemorySpec:
    """A child's persistent memory: the profile's ``scope`` and the absolute ``directory``."""

    scope: MemoryScope
    directory: str


@attrs.frozen
class OneShotDescriptor:
    """A child that runs one task to its end."""

    version: int
    mode: Literal["one-shot"]
    provider: str
    label: str | None = None


@attrs.frozen
class ContinuableDescriptor:
    """A child that can be resumed; carries what reconstruction needs."""

    version: int
    mode: Literal["continuable"]
    provider: str
    label: str
    model: str | None = None
    persona: str | None = None
    tool_filter: ToolFilter | None = None
    max_steps: int | None = None
    profile: str | None = None
    mcp_servers: list[str] | None = None
    memory: MemorySpec | None = None


Descriptor = OneShotDescriptor | ContinuableDescriptor


@attrs.frozen
class Corrupt:
    """Not a valid descriptor (damage); ``problem`` is for logs, never shown to the model."""

    problem: str
    reason: Literal["corrupt"] = "corrupt"


@attrs.frozen
class Unsupported:
    """A descriptor of a version this host does not know (a newer writer)."""

    version: object
    reason: Literal["unsupported"] = "unsupported"


DescriptorVerdict = Descriptor | Corrupt | Unsupported

_BY_MODE: dict[str, type[OneShotDescriptor] | type[ContinuableDescriptor]] = {
    "one-shot": OneShotDescriptor,
    "continuable": ContinuableDescriptor,
}


def parse_descriptor(value: Any) -> DescriptorVerdict:
    """Judge one raw descriptor value; never raises."""
    if not isinstance(value, dict):
        return Corrupt("descriptor is not an object")
    version = value.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        return Corrupt("descriptor has no integer version")
    if version != VERSION:
        return Unsupported(version)
    cls = _BY_MODE.get(value.get("mode"))  # type: ignore[arg-type]
    if cls is None:
        return Corrupt("descriptor has an unknown mode")
    problems = validate(schema_for(cast(type, cls)), value)
    if problems:
        return Corrupt("; ".join(problems))
    steps = value.get("max_steps")
    if isinstance(steps, int) and steps < 1:
        return Corrupt("descriptor max_steps must be at least 1")
    memory = value.get("memory")
    if isinstance(memory, dict) and not os.path.isabs(str(memory.get("directory"))):
        return Corrupt("descriptor memory directory must be an absolute path")
    try:
        return converter.structure(value, cls)
    except (cattrs.BaseValidationError, ValueError, TypeError) as error:
        return Corrupt(str(error))


def descriptor_data(descriptor: Descriptor) -> dict[str, Any]:
    """The JSON form of a descriptor, without absent optional fields."""
    data: dict[str, Any] = converter.unstructure(descriptor)
    if isinstance(descriptor, ContinuableDescriptor) and descriptor.tool_filter is not None:
        data["tool_filter"] = {k: v for k, v in data["tool_filter"].items() if v is not None}
    return {k: v for k, v in data.items() if v is not None}
