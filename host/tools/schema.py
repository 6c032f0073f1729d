"""JSON Schema from an attrs parameter class, and validation of model-supplied arguments.

A tool declares its parameters once, as a frozen attrs class whose fields may carry
``metadata={"description": ...}``. Supported field types: ``str``, ``int``, ``float``, ``bool``,
``list[T]``/``tuple[T, ...]``, ``dict[str, Any]``, ``Literal[...]`` of strings, ``T | None``
and nested attrs classes. A field with a default is optional. Objects reject unknown keys.
"""

from __future__ import annotations

import types
import typing
from functools import cache
from typing import Any, Literal, Union, get_args, get_origin

import attrs

JsonSchema = dict[str, Any]

_SCALARS: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


@cache
def schema_for(cls: type) -> JsonSchema:
    """The JSON Schema of ``cls``'s fields; stable across calls (cached)."""
    hints = typing.get_type_hints(cls)
    properties: dict[str, JsonSchema] = {}
    required: list[str] = []
    for field in attrs.fields(cls):
        prop = _schema_for_type(hints[field.name])
        description = field.metadata.get("description")
        if description:
            prop = {**prop, "description": description}
        properties[field.name] = prop
        if field.default is attrs.NOTHING:
            required.append(field.name)
    schema: JsonSchema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def _schema_for_type(tp: Any) -> JsonSchema:
    if tp in _SCALARS:
        return {"type": _SCALARS[tp]}
    origin = get_origin(tp)
    args = get_args(tp)
    if origin is Literal:
        return {"type": "string", "enum": list(args)}
    if origin in (Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            return _schema_for_type(rest[0])
        return {"anyOf": [_schema_for_type(a) for a in rest]}
    if origin in (list, tuple):
        return {"type": "array", "items": _schema_for_type(args[0])}
    if origin is dict or tp is dict:
        return {"type": "object"}
    if attrs.has(tp):
        return schema_for(tp)
    if tp is Any:
        return {}
    raise TypeError(f"unsupported parameter type {tp!r}")


def validate(schema: JsonSchema, value: Any, path: str = "") -> list[str]:
    """Problems with ``value`` against a schema made by ``schema_for``; empty when it is valid."""
    where = path or "arguments"
    if "anyOf" in schema:
        if any(not validate(option, value, path) for option in schema["anyOf"]):
            return []
        return [f"{where}: does not match any allowed type"]
    expected = schema.get("type")
    if expected is None:
        return []
    if not _has_type(value, expected):
        return [f"{where}: expected {expected}, got {_json_type(value)}"]
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(repr(v) for v in schema["enum"])
        return [f"{where}: must be one of {allowed}"]
    if expected == "array":
        problems: list[str] = []
        for index, item in enumerate(value):
            problems += validate(schema["items"], item, f"{path}[{index}]")
        return problems
    if expected == "object" and "properties" in schema:
        return _validate_object(schema, value, path)
    return []


def _validate_object(schema: JsonSchema, value: dict[str, Any], path: str) -> list[str]:
    problems = [
        f"{path + '.' if path else ''}{name}: required"
        for name in schema.get("required", ())
        if name not in value
    ]
    for name, item in value.items():
        sub = f"{path}.{name}" if path else name
        prop = schema["properties"].get(name)
        if prop is None:
            problems.append(f"{sub}: unknown key")
        else:
            problems += validate(prop, item, sub)
    return problems


def _has_type(value: Any, expected: str) -> bool:
    if expected == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if expected == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return _json_type(value) == expected


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__
