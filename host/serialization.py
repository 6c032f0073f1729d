"""The one cattrs converter through which every JSON value crosses the host's boundary.

Modules that own a type register its hooks here at import time; nobody builds a second
converter. ``to_json`` writes a typed value as JSON; ``structure`` builds one from parsed data.
"""

from __future__ import annotations

import json
import types
import typing
from typing import Any, TypeVar

import attrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from cattrs.preconf.json import make_converter

T = TypeVar("T")

converter = make_converter(forbid_extra_keys=True, omit_if_default=False)

_CAMEL: set[type] = set()


def camel(name: str) -> str:
    """``snake_case`` → ``camelCase``."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def camel_case(cls: type[T]) -> type[T]:
    """Class decorator: ``cls`` crosses the boundary with camelCase keys (the client protocol's
    convention), unknown keys refused. The hooks are made on first use, so fields may name
    classes defined further down."""
    _CAMEL.add(cls)
    return cls


def _renames(cls: type) -> dict[str, Any]:
    return {field.name: override(rename=camel(field.name)) for field in attrs.fields(cls)}


_PLAIN = {str: (str,), int: (int,), float: (int, float), bool: (bool,)}


def _strict(cls: type) -> Any:
    """A camelCase class's structure hook that also refuses a plain value of the wrong JSON
    type (the converter would turn ``3`` into ``"3"``): a client's mistake is an error."""
    renames = _renames(cls)
    made: Any = make_dict_structure_fn(cls, converter, _cattrs_forbid_extra_keys=True, **renames)
    checks = []
    for field in attrs.fields(attrs.resolve_types(cls)):
        options = typing.get_args(field.type) if typing.get_origin(field.type) in _UNIONS else ()
        kinds = [kind for kind in (options or (field.type,)) if kind is not type(None)]
        if len(kinds) == 1 and kinds[0] in _PLAIN:
            checks.append((camel(field.name), kinds[0], type(None) in options))

    def structure_strictly(data: Any, cls: type) -> Any:
        if isinstance(data, dict):
            for key, kind, optional in checks:
                value = data.get(key)
                if key in data and not (value is None and optional):
                    wrong = isinstance(value, bool) and kind is not bool
                    if wrong or not isinstance(value, _PLAIN[kind]):
                        raise TypeError(f"{key}: must be {_JSON_NAMES[kind]}")
        return made(data, cls)

    return structure_strictly


_UNIONS = (typing.Union, types.UnionType)
_JSON_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}

converter.register_unstructure_hook_factory(
    lambda cls: cls in _CAMEL,
    lambda cls: make_dict_unstructure_fn(cls, converter, **_renames(cls)),
)
converter.register_structure_hook_factory(lambda cls: cls in _CAMEL, _strict)


def unstructure(value: Any) -> Any:
    """Turn an attrs value into plain JSON-compatible data."""
    return converter.unstructure(value)


def structure(data: Any, cls: type[T]) -> T:
    """Build a typed value from plain data; raises cattrs errors on a mismatch."""
    return converter.structure(data, cls)


def to_json(value: Any) -> str:
    """Serialize an attrs value to one compact JSON line (no newline)."""
    return json.dumps(converter.unstructure(value), separators=(",", ":"), ensure_ascii=False)
