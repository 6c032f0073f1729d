"""JSON Schema from Python types, and validation of values against it.

The host checks several inputs with it: a tool's model-supplied arguments, a plugin's
``[plugins.<name>]`` table (``host.plugins.config``), the approval policy
(``host.approvals.policy``), subagent descriptors and profiles. A tool declares its parameters
once: as a frozen attrs class whose fields may carry ``metadata={"description": ...}``, or as a
typed function (``host.tools.signature``). The type mapping both share:

* ``str``, ``int``, ``float``, ``bool`` → ``string``, ``integer``, ``number``, ``boolean``;
* ``list[T]``, ``tuple[T, ...]``, ``set[T]``, ``frozenset[T]`` → ``array`` of ``T``;
* ``dict[str, T]`` → ``object`` whose values are ``T`` (``dict`` alone: any object);
* ``Literal[...]`` of strings, integers or booleans → ``enum``; an ``enum.Enum`` → its values;
* ``T | None`` → ``T`` or ``null``; other unions → ``anyOf``; ``Any`` → any value;
* attrs classes, dataclasses and ``TypedDict`` → nested objects (unknown keys rejected).

A field or parameter with a default is optional, and its default (unless None, or built by a
factory) is stated in the schema.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Callable
from functools import cache
from typing import Any, Literal, Union, cast, get_args, get_origin

import attrs

JsonSchema = dict[str, Any]

_SCALARS: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_ARRAYS = (list, tuple, set, frozenset)


class UnsupportedType(TypeError):
    """A type with no JSON Schema; the message names the type, ``path`` the property holding
    it (``outer.inner`` when nested; empty for a bare type)."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.path = path


class Property:
    """One named value of an object: its type, description, and default (``attrs.NOTHING``
    when there is none to state: required, or built by a factory). A plain class: tools'
    schemas are built while plugins activate, where class creation would cost start-up."""

    __slots__ = ("default", "description", "name", "required", "type")

    def __init__(
        self,
        name: str,
        type: Any,
        description: str | None = None,
        default: Any = attrs.NOTHING,
        *,
        required: bool = True,
    ) -> None:
        self.name = name
        self.type = type
        self.description = description
        self.default = default
        self.required = required


def object_schema(properties: list[Property]) -> JsonSchema:
    """The schema of an object with exactly ``properties`` (unknown keys rejected)."""
    props: dict[str, JsonSchema] = {}
    for prop in properties:
        try:
            schema = schema_for_type(prop.type)
        except UnsupportedType as error:
            path = f"{prop.name}.{error.path}" if error.path else prop.name
            raise UnsupportedType(error.message, path) from None
        if prop.description:
            schema = {**schema, "description": prop.description}
        if prop.default is not attrs.NOTHING and prop.default is not None:
            default = _json_default(prop.default)
            if default is not attrs.NOTHING:
                schema = {**schema, "default": default}
        props[prop.name] = schema
    result: JsonSchema = {"type": "object", "properties": props}
    required = [prop.name for prop in properties if prop.required]
    if required:
        result["required"] = required
    result["additionalProperties"] = False
    return result


def _json_default(value: Any) -> Any:
    """``value`` as JSON, or ``attrs.NOTHING`` when it has no plain JSON form."""
    if isinstance(value, enum.Enum):
        value = value.value
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, tuple | list | frozenset) and not value:
        return []
    return attrs.NOTHING


@cache
def schema_for(cls: type) -> JsonSchema:
    """The JSON Schema of an attrs class, dataclass or ``TypedDict``; stable across calls."""
    return object_schema(_class_properties(cls))


def _class_properties(cls: type) -> list[Property]:
    try:
        hints = typing.get_type_hints(cls)
    except Exception as error:  # a name the class's module cannot resolve
        message = f"{cls.__qualname__}: cannot resolve its annotations: {error}"
        raise UnsupportedType(message) from None
    if attrs.has(cls):
        # bound to the fields now, while the class's module is loaded: parsing (cattrs) reads
        # them from the fields, also after a reload unloaded that module (a sibling plugin's)
        attrs.resolve_types(cls)
        return [
            Property(
                field.name,
                hints[field.name],
                field.metadata.get("description"),
                _plain_default(field.default),
                required=field.default is attrs.NOTHING,
            )
            for field in attrs.fields(cls)
        ]
    if dataclasses.is_dataclass(cls):
        return [
            Property(
                field.name,
                hints[field.name],
                field.metadata.get("description"),
                field.default if field.default is not dataclasses.MISSING else attrs.NOTHING,
                required=field.default is dataclasses.MISSING
                and field.default_factory is dataclasses.MISSING,
            )
            for field in dataclasses.fields(cls)
        ]
    required_keys: frozenset[str] = getattr(cls, "__required_keys__", frozenset())
    return [Property(name, tp, required=name in required_keys) for name, tp in hints.items()]


def _plain_default(default: Any) -> Any:
    """An attrs field's default, or ``attrs.NOTHING`` when a factory builds it."""
    factory = cast(type, attrs.Factory)  # a class, though typed as a function
    return attrs.NOTHING if isinstance(default, factory) else default


def _is_typed_dict(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__required_keys__")


def schema_for_type(tp: Any) -> JsonSchema:
    """The JSON Schema of one type (see the module docstring); ``UnsupportedType`` otherwise."""
    if tp in _SCALARS:
        return {"type": _SCALARS[tp]}
    if tp is Any:
        return {}
    origin, args = get_origin(tp), get_args(tp)
    if origin is Literal:
        return _enum_schema(list(args))
    if origin in (Union, types.UnionType):
        return _union_schema(args)
    if origin in _ARRAYS or tp in _ARRAYS:
        if origin is tuple and (len(args) != 2 or args[1] is not Ellipsis):
            raise UnsupportedType(f"{tp!r} (only tuple[T, ...] has a schema)")
        return {"type": "array", "items": schema_for_type(args[0]) if args else {}}
    if origin is dict or tp is dict:
        return _dict_schema(tp, args)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _enum_schema([member.value for member in tp])
    if isinstance(tp, type) and (attrs.has(tp) or dataclasses.is_dataclass(tp)):
        return schema_for(tp)
    if _is_typed_dict(tp):
        return schema_for(tp)
    raise UnsupportedType(f"{_type_name(tp)} has no JSON Schema")


def _enum_schema(values: list[Any]) -> JsonSchema:
    kinds = {_json_type(value) for value in values}
    if len(kinds) != 1 or not kinds <= {"string", "integer", "boolean", "number"}:
        raise UnsupportedType(f"enum of {values!r} (one JSON scalar type only)")
    return {"type": kinds.pop(), "enum": values}


def _union_schema(args: tuple[Any, ...]) -> JsonSchema:
    rest = [a for a in args if a is not type(None)]
    options = [schema_for_type(a) for a in rest]
    if len(rest) == len(args):
        return {"anyOf": options}
    if len(options) == 1 and set(options[0]) == {"type"}:
        return {"type": [options[0]["type"], "null"]}
    return {"anyOf": [*options, {"type": "null"}]}


def _dict_schema(tp: Any, args: tuple[Any, ...]) -> JsonSchema:
    if not args or args[1] is Any:
        return {"type": "object"}
    if args[0] is not str:
        raise UnsupportedType(f"{_type_name(tp)} (object keys are strings)")
    return {"type": "object", "additionalProperties": schema_for_type(args[1])}


def _type_name(tp: Any) -> str:
    return tp.__qualname__ if isinstance(tp, type) else repr(tp)


def validate(schema: JsonSchema, value: Any, path: str = "") -> list[str]:
    """Problems with ``value`` against a schema made here; empty when it is valid."""
    where = path or "arguments"
    if "anyOf" in schema:
        options = [o for o in schema["anyOf"] if value is None or o != {"type": "null"}]
        if len(options) == 1:  # T | None given a value: T's own problems say the most
            return validate(options[0], value, path)
        if any(not validate(option, value, path) for option in options):
            return []
        return [f"{where}: does not match any allowed type"]
    expected = schema.get("type")
    if expected is None:
        return []
    allowed = expected if isinstance(expected, list) else [expected]
    if not any(_has_type(value, kind) for kind in allowed):
        named = [kind for kind in allowed if kind != "null"]  # null: the value left out
        return [f"{where}: expected {' or '.join(named)}, got {_json_type(value)}"]
    if value is None:
        return []
    if "enum" in schema and value not in schema["enum"]:
        listed = ", ".join(repr(v) for v in schema["enum"])
        return [f"{where}: must be one of {listed}"]
    if isinstance(value, list | tuple):
        return _validate_items(schema.get("items", {}), value, path)
    if isinstance(value, dict):
        return _validate_object(schema, value, path)
    return []


def _validate_items(items: JsonSchema, value: list[Any] | tuple[Any, ...], path: str) -> list[str]:
    problems: list[str] = []
    for index, item in enumerate(value):
        problems += validate(items, item, f"{path}[{index}]")
    return problems


def _validate_object(schema: JsonSchema, value: dict[str, Any], path: str) -> list[str]:
    def sub(name: str) -> str:
        return f"{path}.{name}" if path else name

    if "properties" not in schema:
        extra = schema.get("additionalProperties")
        if not isinstance(extra, dict):
            return []
        return [p for name, item in value.items() for p in validate(extra, item, sub(name))]
    problems = [
        f"{sub(name)}: required" for name in schema.get("required", ()) if name not in value
    ]
    for name, item in value.items():
        prop = schema["properties"].get(name)
        if prop is None:
            problems.append(f"{sub(name)}: unknown key")
        else:
            problems += validate(prop, item, sub(name))
    return problems


_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
}


def _has_type(value: Any, expected: str) -> bool:
    check = _JSON_TYPES.get(expected)
    return check(value) if check is not None else _json_type(value) == expected


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
