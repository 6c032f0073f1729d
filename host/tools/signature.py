"""Function tools: a typed Python function read as a tool's manual and its argument schema.

``@tool`` on ``async def note_add(text: str, tags: list[str] | None = None) -> str`` makes a
tool named ``note_add``. The docstring's text before its first section is the description;
its ``Args:`` section (Google style: ``name: text``, continued on deeper-indented lines) gives
the parameters' descriptions. The schema comes from the annotations (``host.schema``)
and the annotations are resolved and checked when the tool is registered (never at import);
the schema with the docstring's descriptions is made on first use. A parameter
annotated ``ToolExec`` receives the call's execution context and is not in the schema.

A parameter without an annotation, ``*args``/``**kwargs``, a positional-only parameter or a
type with no JSON Schema is refused with a ``TypeError`` naming the tool and the parameter.
The function may be ``async`` (awaited) or plain: a plain one runs on a worker thread of the
host (``host.tools.workers``) so blocking I/O in it never stalls the event loop, unless the tool
was declared ``blocking=False`` (a cheap pure function, called on the loop). A plain one that
takes a ``ToolExec`` runs on the loop unless declared ``blocking=True``: the services, the agent
and the signal it reaches belong to the event loop (on a thread, read only
``exec.signal.is_set()``).
"""

from __future__ import annotations

import functools
import inspect
import re
import typing
from collections.abc import Callable
from types import CodeType, FunctionType
from typing import Any

import attrs

from host.schema import JsonSchema, Property, UnsupportedType, object_schema, validate
from host.tools.arguments import ObjectArguments
from host.tools.tool import ToolExec

_ARGUMENT_SECTIONS = {"Args", "Arguments", "Parameters"}
_ENTRY = r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$"
"""``name: text`` or ``name (type): text`` (compiled on first use, by ``re``'s cache)."""
_KNOWN_SECTIONS = _ARGUMENT_SECTIONS | {
    "Returns", "Return", "Raises", "Yields", "Example", "Examples", "Note", "Notes",
    "See Also", "Warning", "Warnings", "Todo",
}  # fmt: skip
_PASS_THROUGH = {str, int, bool, Any}
"""Types whose validated JSON value is already the Python value."""


def summary(docstring: str | None) -> str:
    """The description in a docstring: its text before the first section, tidied."""
    lines: list[str] = []
    for line in inspect.cleandoc(docstring or "").splitlines():
        if _section(line) is not None:
            break
        lines.append(line)
    return "\n".join(lines).strip()


def argument_descriptions(docstring: str | None) -> dict[str, str]:
    """``name -> description`` from a docstring's ``Args:`` section (continuations joined)."""
    found: dict[str, str] = {}
    inside, current, indent = False, "", 0
    for line in inspect.cleandoc(docstring or "").splitlines():
        section = _section(line)
        if section is not None:
            inside, current = section in _ARGUMENT_SECTIONS, ""
            continue
        if not inside or not line.strip():
            continue
        depth = len(line) - len(line.lstrip())
        entry = re.match(_ENTRY, line.strip())
        if entry is not None and (not current or depth <= indent):
            current, indent = entry.group(1).lstrip("*"), depth
            found[current] = entry.group(2).strip()
        elif current:
            found[current] = f"{found[current]} {line.strip()}".strip()
    return found


def _section(line: str) -> str | None:
    """The section a docstring line opens (``Args``, ``Returns`` …), or None."""
    stripped = line.strip()
    name = stripped[:-1].rstrip() if stripped.endswith(":") else ""
    return name if name in _KNOWN_SECTIONS else None


class _Declaration:
    """What registration learnt: ``(name, type)`` of each parameter in the schema, the
    ``ToolExec`` parameter if any, and the schema without the docstring's descriptions (those
    join on first use). A plain class: this module loads while plugins activate."""

    __slots__ = ("exec_parameter", "parameters", "schema")

    def __init__(
        self,
        parameters: tuple[tuple[str, Any], ...],
        exec_parameter: str | None,
        schema: JsonSchema,
    ) -> None:
        self.parameters = parameters
        self.exec_parameter = exec_parameter
        self.schema = schema


_EMPTY = inspect.Parameter.empty
_KIND = inspect.Parameter


class FunctionSignature(ObjectArguments):
    """A function's parameters as a tool's arguments (``host.tools.arguments``): schema,
    ``parse`` (the checked dict) and the call, which structures each parameter's value.

    ``declare()`` (at registration) resolves the annotations and checks that every parameter
    has a schema; the full schema, with the docstring's descriptions, is made on first use.
    """

    def __init__(
        self, function: Callable[..., Any], tool_name: str, *, blocking: bool | None = None
    ) -> None:
        self.function = function
        self.tool_name = tool_name
        self.blocking = None if _asynchronous(function) else blocking
        """For a plain function: True on a thread, False on the loop, None as its parameters
        say (on a thread unless it takes a ``ToolExec``); None for an ``async`` one too."""
        self._declaration: _Declaration | None = None

    @functools.cached_property
    def schema(self) -> JsonSchema:
        """The arguments' JSON Schema (built on first use, then kept as a value; ``TypeError``
        when it cannot be)."""
        return _described(self.declare().schema, self.function.__doc__)

    @property
    def threaded(self) -> bool:
        """Whether a call runs on a worker thread (a plain function: ``blocking`` if declared,
        else unless it takes a ``ToolExec``); resolves the parameters."""
        if self.blocking is not None:
            return self.blocking
        return not _asynchronous(self.function) and self.declare().exec_parameter is None

    def check(self, raw: Any) -> list[str]:
        """Problems with raw arguments by the schema; empty when they are valid."""
        return validate(self.schema, raw)

    async def call(self, arguments: dict[str, Any], exec: ToolExec) -> Any:
        """Call the function with checked ``arguments`` (structured to the annotated types)."""
        declaration = self.declare()
        kwargs = {
            name: _structure(arguments[name], hint)
            for name, hint in declaration.parameters
            if name in arguments
        }
        if declaration.exec_parameter is not None:
            kwargs[declaration.exec_parameter] = exec
        if self.threaded:
            from host.tools.workers import run_blocking  # threads: only once a plain tool runs

            result = await run_blocking(exec.ctx, self.function, kwargs)
        else:
            result = self.function(**kwargs)
        return await result if inspect.isawaitable(result) else result

    def declare(self) -> _Declaration:
        """Resolve and check the parameters once; ``TypeError`` naming the one refused."""
        if self._declaration is None:
            self._declaration = self._declare()
        return self._declaration

    def _declare(self) -> _Declaration:
        hints = self._hints()
        parameters: list[tuple[str, Any]] = []
        properties: list[Property] = []
        exec_parameter: str | None = None
        for name, kind, default in _parameters(self.function):
            self._refuse_kind(name, kind)
            hint = hints.get(name, _EMPTY)
            if hint is ToolExec:
                exec_parameter = name
                continue
            if hint is _EMPTY:
                raise TypeError(f"{self._where(name)}: no type annotation")
            parameters.append((name, hint))
            required = default is _EMPTY
            properties.append(
                Property(
                    name, hint, None, attrs.NOTHING if required else default, required=required
                )
            )
        try:
            schema = object_schema(properties)
        except UnsupportedType as error:
            raise TypeError(f"{self._where(error.path)}: {error.message}") from None
        return _Declaration(tuple(parameters), exec_parameter, schema)

    def _hints(self) -> dict[str, Any]:
        """The parameters' annotations as types. Annotations that are types already are used
        as they are, strings (``from __future__ import annotations``) evaluated in the
        function's module; ``typing.get_type_hints`` for anything subtler."""
        if not _plain(self.function):  # a partial, a callable object: read its signature
            try:
                signature = inspect.signature(self.function, eval_str=True)
            except Exception as error:
                raise TypeError(
                    f"{self._where()}: cannot resolve its annotations: {error}"
                ) from None
            return {
                p.name: p.annotation
                for p in signature.parameters.values()
                if p.annotation is not _EMPTY
            }
        annotations: dict[str, Any] = getattr(self.function, "__annotations__", {})
        try:
            hints = {
                name: _evaluated(annotation, self.function)
                for name, annotation in annotations.items()
                if name != "return"
            }
            if all(_resolved(hint) for hint in hints.values()):
                return hints
            return typing.get_type_hints(self.function)
        except Exception as error:
            raise TypeError(f"{self._where()}: cannot resolve its annotations: {error}") from None

    def _refuse_kind(self, name: str, kind: inspect._ParameterKind) -> None:
        if kind is _KIND.VAR_POSITIONAL:
            raise TypeError(f"{self._where(name)}: *{name} is not supported")
        if kind is _KIND.VAR_KEYWORD:
            raise TypeError(f"{self._where(name)}: **{name} is not supported")
        if kind is _KIND.POSITIONAL_ONLY:
            raise TypeError(f"{self._where(name)}: positional-only is not supported")

    def _where(self, parameter: str | None = None) -> str:
        place = f'tool "{self.tool_name}"'
        return f'{place}: parameter "{parameter}"' if parameter is not None else place


def _described(schema: JsonSchema, docstring: str | None) -> JsonSchema:
    """``schema`` with the docstring's ``Args:`` descriptions on its properties."""
    properties = dict(schema["properties"])
    for name, description in argument_descriptions(docstring).items():
        if name in properties and description:
            properties[name] = {**properties[name], "description": description}
    return {**schema, "properties": properties}


@functools.cache
def _compiled(annotation: str) -> CodeType:
    return compile(annotation, "<annotation>", "eval")


def _evaluated(annotation: Any, function: Callable[..., Any]) -> Any:
    if not isinstance(annotation, str):
        return annotation
    return eval(_compiled(annotation), getattr(function, "__globals__", {}))


def _resolved(hint: Any) -> bool:
    """Whether ``hint`` holds no forward reference (a string) anywhere inside."""
    if isinstance(hint, str | typing.ForwardRef):
        return False
    return all(_resolved(arg) for arg in typing.get_args(hint) if arg is not Ellipsis)


def _asynchronous(function: Callable[..., Any]) -> bool:
    """Whether calling ``function`` returns a coroutine (an ``async def``, a partial of one,
    or an object whose ``__call__`` is one)."""
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(
        type(function).__call__ if callable(function) else None
    )


def _plain(function: Callable[..., Any]) -> bool:
    """A plain function, read straight from its code object and annotations (anything else,
    wrapped functions included, through ``inspect.signature``)."""
    return isinstance(function, FunctionType) and not hasattr(function, "__wrapped__")


def _parameters(function: Callable[..., Any]) -> list[tuple[str, inspect._ParameterKind, Any]]:
    """``(name, kind, default)`` of each parameter, read straight from a plain function's code
    object (``inspect.signature`` for anything else: wrapped functions, partials, callables)."""
    if not _plain(function):
        signature = inspect.signature(function)
        return [(p.name, p.kind, p.default) for p in signature.parameters.values()]
    code = function.__code__
    names, positional, keyword = code.co_varnames, code.co_argcount, code.co_kwonlyargcount
    defaults = function.__defaults__ or ()
    first_default = positional - len(defaults)
    found: list[tuple[str, inspect._ParameterKind, Any]] = [
        (
            names[i],
            _KIND.POSITIONAL_ONLY if i < code.co_posonlyargcount else _KIND.POSITIONAL_OR_KEYWORD,
            defaults[i - first_default] if i >= first_default else _EMPTY,
        )
        for i in range(positional)
    ]
    extra = positional + keyword
    if code.co_flags & inspect.CO_VARARGS:
        found.append((names[extra], _KIND.VAR_POSITIONAL, _EMPTY))
        extra += 1
    keyword_defaults = function.__kwdefaults__ or {}
    for name in names[positional : positional + keyword]:
        found.append((name, _KIND.KEYWORD_ONLY, keyword_defaults.get(name, _EMPTY)))
    if code.co_flags & inspect.CO_VARKEYWORDS:
        found.append((names[extra], _KIND.VAR_KEYWORD, _EMPTY))
    return found


def _structure(value: Any, hint: Any) -> Any:
    """A checked JSON value as the annotated type (nested classes built by cattrs)."""
    if hint in _PASS_THROUGH or value is None:
        return value
    if hint is float:
        return float(value)
    from host.serialization import converter  # cattrs: only once a tool takes structured values

    return converter.structure(value, hint)
