"""Function tools: a typed Python function read as a tool's manual and its argument schema.

``@tool`` on ``async def note_add(text: str, tags: list[str] | None = None) -> str`` makes a
tool named ``note_add``. The docstring's text before its first section is the description;
its ``Args:`` section (Google style: ``name: text``, continued on deeper-indented lines) gives
the parameters' descriptions. The schema comes from the annotations (``host.tools.schema``)
and is built on first use — when the tool is registered — never at import. A parameter
annotated ``ToolExec`` receives the call's execution context and is not in the schema.

A parameter without an annotation, ``*args``/``**kwargs``, a positional-only parameter or a
type with no JSON Schema is refused with a ``TypeError`` naming the tool and the parameter.
The function may be ``async`` (awaited) or plain (called on the event loop: keep it quick).
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable
from typing import Any, NamedTuple

import attrs

from host.tools.schema import JsonSchema, Property, UnsupportedType, object_schema, validate
from host.tools.tool import ToolExec

_SECTION = re.compile(r"^\s*(\w+(?: \w+)?):\s*$")
_ARGUMENT_SECTIONS = {"Args", "Arguments", "Parameters"}
_ENTRY = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
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
        entry = _ENTRY.match(line.strip())
        if entry is not None and (not current or depth <= indent):
            current, indent = entry.group(1).lstrip("*"), depth
            found[current] = entry.group(2).strip()
        elif current:
            found[current] = f"{found[current]} {line.strip()}".strip()
    return found


def _section(line: str) -> str | None:
    """The section a docstring line opens (``Args``, ``Returns`` …), or None."""
    match = _SECTION.match(line)
    return match.group(1) if match is not None and match.group(1) in _KNOWN_SECTIONS else None


class _Declaration(NamedTuple):
    parameters: tuple[tuple[str, Any], ...]
    """``(name, type)`` of each parameter in the schema."""
    exec_parameter: str | None
    schema: JsonSchema


class FunctionSignature:
    """A function's parameters as a tool's arguments: schema, validation and the call."""

    def __init__(self, function: Callable[..., Any], tool_name: str) -> None:
        self.function = function
        self.tool_name = tool_name
        self._declaration: _Declaration | None = None

    @property
    def schema(self) -> JsonSchema:
        """The arguments' JSON Schema (built on first use; ``TypeError`` when it cannot be)."""
        return self._declared().schema

    def check(self, raw: Any) -> list[str]:
        """Problems with raw arguments; empty when they are valid."""
        return validate(self.schema, raw)

    async def call(self, arguments: dict[str, Any], exec: ToolExec) -> Any:
        """Call the function with checked ``arguments`` (structured to the annotated types)."""
        declaration = self._declared()
        kwargs = {
            name: _structure(arguments[name], hint)
            for name, hint in declaration.parameters
            if name in arguments
        }
        if declaration.exec_parameter is not None:
            kwargs[declaration.exec_parameter] = exec
        result = self.function(**kwargs)
        return await result if inspect.isawaitable(result) else result

    def _declared(self) -> _Declaration:
        if self._declaration is None:
            self._declaration = self._declare()
        return self._declaration

    def _declare(self) -> _Declaration:
        try:
            hints = typing.get_type_hints(self.function)
        except Exception as error:
            raise TypeError(f"{self._where()}: cannot resolve its annotations: {error}") from None
        parameters: list[tuple[str, Any]] = []
        properties: list[Property] = []
        exec_parameter: str | None = None
        descriptions = argument_descriptions(self.function.__doc__)
        for parameter in inspect.signature(self.function).parameters.values():
            self._refuse_kind(parameter)
            hint = hints.get(parameter.name, inspect.Parameter.empty)
            if hint is ToolExec:
                exec_parameter = parameter.name
                continue
            if hint is inspect.Parameter.empty:
                raise TypeError(f"{self._where(parameter.name)}: no type annotation")
            parameters.append((parameter.name, hint))
            required = parameter.default is inspect.Parameter.empty
            properties.append(
                Property(
                    parameter.name,
                    hint,
                    descriptions.get(parameter.name),
                    attrs.NOTHING if required else parameter.default,
                    required=required,
                )
            )
        return _Declaration(tuple(parameters), exec_parameter, self._schema(properties))

    def _refuse_kind(self, parameter: inspect.Parameter) -> None:
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            raise TypeError(f"{self._where(parameter.name)}: *{parameter.name} is not supported")
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            raise TypeError(f"{self._where(parameter.name)}: **{parameter.name} is not supported")
        if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise TypeError(f"{self._where(parameter.name)}: positional-only is not supported")

    def _schema(self, properties: list[Property]) -> JsonSchema:
        try:
            return object_schema(properties)
        except UnsupportedType as error:
            raise TypeError(f"{self._where(error.path)}: {error.message}") from None

    def _where(self, parameter: str | None = None) -> str:
        place = f'tool "{self.tool_name}"'
        return f'{place}: parameter "{parameter}"' if parameter is not None else place


def _structure(value: Any, hint: Any) -> Any:
    """A checked JSON value as the annotated type (nested classes built by cattrs)."""
    if hint in _PASS_THROUGH or value is None:
        return value
    if hint is float:
        return float(value)
    from host.serialization import converter  # cattrs: only once a tool takes structured values

    return converter.structure(value, hint)
