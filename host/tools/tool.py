"""The tool type: a name, the model's manual, one parameter declaration, an async execute."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import attrs

from host.cancel import CancelSignal
from host.tools.schema import JsonSchema, schema_for

if TYPE_CHECKING:  # only for annotations: keeps the session model off start-up
    from host.api import ServiceContext
    from host.sessions.model import SessionHeader


@attrs.frozen
class ToolResult:
    """What a tool returns to the model: text, whether it is an error, structured output."""

    text: str
    is_error: bool = False
    structured: Any = None

    @classmethod
    def error(cls, text: str, structured: Any = None) -> ToolResult:
        """An error result the model sees (never an exception)."""
        return cls(text, is_error=True, structured=structured)


@attrs.frozen
class ToolExec:
    """The execution context of one tool call.

    ``agent`` is the calling agent (None when a tool runs without one), ``ctx`` the service
    context (typed as ``host.api.ServiceContext``), ``signal`` the call's cancel token,
    ``tool_call_id`` the model's id for the call.
    """

    agent: Any
    ctx: ServiceContext
    signal: CancelSignal = attrs.field(factory=CancelSignal)
    tool_call_id: str = ""


Execute = Callable[[Any, ToolExec], Awaitable["ToolResult | str"]]
Check = Callable[[Any], list[str]]
"""Problems with raw arguments (one short line each); empty when they are valid."""


@attrs.frozen
class Tool:
    """A model-callable tool.

    ``params`` is a frozen attrs class declaring the arguments; ``parameters`` is its JSON Schema.
    ``execute(args, exec)`` receives an instance of ``params``. ``concurrency_safe`` tools may
    run concurrently with the rest of their batch; ``needs_agent`` tools refuse agentless calls.
    ``offered_to(header)``, when given, decides from an agent's session header whether that
    agent is offered the tool at all (e.g. no delegation tool beyond the depth limit).

    A tool made by ``schema_tool`` has no params class: ``schema`` is its JSON Schema as given
    (say, by an MCP server), ``check`` validates raw arguments against it, and ``execute``
    receives the arguments as a dict.
    """

    name: str
    description: str
    params: type
    execute: Execute
    concurrency_safe: bool = False
    needs_agent: bool = True
    offered_to: Callable[[SessionHeader], bool] | None = None
    schema: JsonSchema | None = None
    check: Check | None = None

    @property
    def parameters(self) -> JsonSchema:
        """The JSON Schema of the arguments: ``schema`` when given, else generated from
        ``params`` (stable across calls)."""
        return self.schema if self.schema is not None else schema_for(self.params)


def tool(
    name: str,
    description: str,
    params: type,
    *,
    concurrency_safe: bool = False,
    needs_agent: bool = True,
    offered_to: Callable[[SessionHeader], bool] | None = None,
) -> Callable[[Execute], Tool]:
    """Decorator turning ``async def f(args, exec)`` into a ``Tool``."""

    def wrap(execute: Execute) -> Tool:
        schema_for(params)  # fail at declaration time on an unsupported field type
        return Tool(name, description, params, execute, concurrency_safe, needs_agent, offered_to)

    return wrap


def schema_tool(
    name: str,
    description: str,
    schema: JsonSchema,
    execute: Execute,
    *,
    check: Check,
    concurrency_safe: bool = False,
    needs_agent: bool = True,
    offered_to: Callable[[SessionHeader], bool] | None = None,
) -> Tool:
    """A tool whose arguments are described by a JSON Schema given as is: ``check`` validates
    raw arguments before every call, and ``execute(arguments_dict, exec)`` runs it."""
    return Tool(
        name,
        description,
        dict,
        execute,
        concurrency_safe,
        needs_agent,
        offered_to,
        schema=schema,
        check=check,
    )
