"""The tool type: a name, the model's manual, one parameter declaration, an async execute."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Generic, overload

import attrs
from typing_extensions import TypeVar

from host.cancel import CancelSignal
from host.schema import JsonSchema
from host.services import Lookup
from host.tools.arguments import Arguments, Check, ParamsArguments, SchemaArguments

log = logging.getLogger(__name__)

if TYPE_CHECKING:  # only for annotations: keeps the session model off start-up
    from host.sessions.model import SessionHeader
    from host.tools.signature import FunctionSignature


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
class ToolProgress:
    """How far a tool call has got, as its tool reports it: a stream listener sees it (the
    session log never does). ``progress``/``total`` are numbers when the tool gives them."""

    tool_call_id: str
    message: str
    progress: float | None = None
    total: float | None = None


AgentT = TypeVar("AgentT", default=Any)
ContextT = TypeVar("ContextT", bound=Lookup | None, default=Lookup | None, covariant=True)


@attrs.frozen
class ToolExec(Generic[AgentT, ContextT]):
    """The execution context of one tool call.

    ``agent`` is the calling agent (None when a tool runs without one), ``ctx`` the service
    context (None when a tool runs without a host's services), ``signal`` the call's cancel
    token, ``tool_call_id`` the model's id for the call, ``on_progress`` where
    ``report_progress`` sends progress (the agent's stream listeners; None: nowhere).

    The tool engine, below the agents and services, leaves the agent's type open and reads
    only ``find`` of the context (``Lookup``); a plugin's ``ToolExec`` (from ``host.tools`` or
    ``host.api``) is this class with ``agent`` typed as ``host.agents.agent.Agent`` and ``ctx``
    as ``host.api.ServiceContext``.
    """

    agent: AgentT
    ctx: ContextT
    signal: CancelSignal = attrs.field(factory=CancelSignal)
    tool_call_id: str = ""
    on_progress: Callable[[ToolProgress], None] | None = None

    def report_progress(
        self, message: str, progress: float | None = None, total: float | None = None
    ) -> None:
        """Tell whoever follows the call how far it got (on the agents' event loop)."""
        if self.on_progress is not None:
            self.on_progress(ToolProgress(self.tool_call_id, message, progress, total))


Execute = Callable[[Any, ToolExec[Any, Any]], Awaitable[Any]]
"""``execute(args, exec)``: returns a ``ToolResult``, a string, or a JSON-able value."""
OfferedTo = Callable[["SessionHeader"], bool]
"""Whether an agent, by its session header, is offered a tool at all."""
Description = str | Callable[[], str]
"""A tool's description: the text, or a function returning the text as of now."""


@attrs.frozen
class Tool:
    """A model-callable tool.

    ``arguments`` is the one shape every form of declaring arguments makes
    (``host.tools.arguments``): its ``schema`` is what the model is given (``parameters``),
    its ``parse(raw)`` checks the model's raw arguments and builds what ``execute(args, exec)``
    receives — an instance of the attrs ``Params`` class (``@tool(name, description,
    Params)``), or the arguments as a dict (``@tool`` on a typed function, ``schema_tool``).
    ``concurrency_safe`` tools may run concurrently with the rest of their batch;
    ``needs_agent`` tools refuse agentless calls.
    ``offered_to(header)``, when given, decides from an agent's session header whether that
    agent is offered the tool at all (e.g. no delegation tool beyond the depth limit).
    ``needs_approval`` (a bool, or a function of the parsed arguments) asks the root's user
    before a call runs, as the deployment's ``[approvals]`` policy says (``host.approvals``).

    ``description`` is the model's manual: a string, or a function called each time the tool
    is described (the delegation tool lists the profiles in effect); ``describe()`` is the text
    as of now, what the model and the tool catalog are given.
    """

    name: str
    description: Description
    arguments: Arguments
    execute: Execute
    concurrency_safe: bool = False
    needs_agent: bool = True
    offered_to: OfferedTo | None = None
    needs_approval: bool | Callable[[Any], bool] = False

    def describe(self) -> str:
        """The description as of now: ``description``, called when it is a function."""
        description = self.description
        if isinstance(description, str):
            return description
        try:
            return description()
        except Exception as error:  # one broken description must not end every turn
            log.exception("the description of tool %s failed", self.name)
            return f"(the description of {self.name} failed: {type(error).__name__}: {error})"

    @property
    def parameters(self) -> JsonSchema:
        """The JSON Schema of the arguments (stable across calls; a function tool's is built
        on first use). ``TypeError`` when it has none."""
        return self.arguments.schema

    @property
    def params(self) -> type:
        """The type ``execute`` receives: the ``Params`` class, else ``dict``."""
        return self.arguments.params

    @property
    def signature(self) -> FunctionSignature | None:
        """The typed function whose parameters are the arguments (``@tool`` on a function),
        else None."""
        from host.tools.signature import FunctionSignature

        return self.arguments if isinstance(self.arguments, FunctionSignature) else None

    def declare(self) -> None:
        """Check the arguments' declaration: ``TypeError`` naming the parameter when it has no
        schema. A function tool resolves its annotations here, once (the host calls this when
        the tool is registered); the other forms were checked when they were made."""
        self.arguments.declare()


@overload
def tool(
    function: Callable[..., Any],
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    concurrency_safe: bool = False,
    needs_agent: bool = False,
    offered_to: OfferedTo | None = None,
    needs_approval: bool | Callable[[Any], bool] = False,
    blocking: bool | None = None,
) -> Tool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    concurrency_safe: bool = False,
    needs_agent: bool = False,
    offered_to: OfferedTo | None = None,
    needs_approval: bool | Callable[[Any], bool] = False,
    blocking: bool | None = None,
) -> Callable[[Callable[..., Any]], Tool]: ...


@overload
def tool(
    name: str,
    description: Description,
    params: type,
    *,
    concurrency_safe: bool = False,
    needs_agent: bool = True,
    offered_to: OfferedTo | None = None,
    needs_approval: bool | Callable[[Any], bool] = False,
) -> Callable[[Execute], Tool]: ...


def tool(*args: Any, **options: Any) -> Any:
    """Make a ``Tool``, in one of two forms.

    * ``@tool`` (or ``@tool(name=…, description=…, concurrency_safe=…, needs_agent=…,
      offered_to=…, needs_approval=…, blocking=…)``) on a typed function: see
      ``host.tools.signature``. Its name is the function's, its description the docstring's;
      it needs no calling agent unless ``needs_agent=True``. A plain ``def`` runs on a worker
      thread unless ``blocking=False`` (then on the event loop: keep it quick); one taking a
      ``ToolExec`` runs on the loop unless ``blocking=True``.
    * ``@tool(name, description, Params)`` on ``async def f(args, exec)``, where ``Params`` is a
      frozen attrs class; the schema is checked at once.
    """
    if len(args) == 1 and callable(args[0]):
        return function_tool(args[0], **options)
    if not args:
        return lambda function: function_tool(function, **options)
    if len(args) != 3:
        raise TypeError(
            "tool() takes a function (@tool, @tool(name=…)) or name, description and an "
            f"attrs Params class; got {len(args)} positional arguments"
        )
    name, description, params = args
    arguments = ParamsArguments(params)  # fails here on an unsupported field type

    def wrap(execute: Execute) -> Tool:
        return Tool(name, description, arguments, execute, **options)

    return wrap


def function_tool(
    function: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    concurrency_safe: bool = False,
    needs_agent: bool = False,
    offered_to: OfferedTo | None = None,
    needs_approval: bool | Callable[[Any], bool] = False,
    blocking: bool | None = None,
) -> Tool:
    """A ``Tool`` calling ``function`` with its arguments (``@tool`` on a function); a plain
    ``def`` runs on a worker thread unless ``blocking=False``, or on the loop when it takes a
    ``ToolExec`` and ``blocking=True`` is not given."""
    from host.tools.signature import FunctionSignature, summary  # on first use, not at start-up

    tool_name = name or function.__name__
    signature = FunctionSignature(function, tool_name, blocking=blocking)
    return Tool(
        tool_name,
        summary(function.__doc__) if description is None else description,
        signature,
        signature.call,
        concurrency_safe,
        needs_agent,
        offered_to,
        needs_approval,
    )


def schema_tool(
    name: str,
    description: Description,
    schema: JsonSchema,
    execute: Execute,
    *,
    check: Check,
    concurrency_safe: bool = False,
    needs_agent: bool = True,
    offered_to: OfferedTo | None = None,
    needs_approval: bool | Callable[[Any], bool] = False,
) -> Tool:
    """A tool whose arguments are described by a JSON Schema given as is: ``check`` validates
    raw arguments before every call, and ``execute(arguments_dict, exec)`` runs it."""
    return Tool(
        name,
        description,
        SchemaArguments(schema, check),
        execute,
        concurrency_safe,
        needs_agent,
        offered_to,
        needs_approval,
    )
