"""The protocol's JSON Schema, generated from the attrs classes the server encodes with.

``documents()`` gives one schema per message: ``<method>.params`` and ``<method>.result`` of
each request, ``<method>.params`` of each notification (the feed's events) and of each
server request with its ``.result``, and ``error`` (every error response's ``error``). A
method's ``/`` becomes ``.`` in its file name (``thread.start.params.json``). Keys are the
wire's camelCase; unknown keys are refused where the server refuses them (params) and allowed
elsewhere (results and notifications may gain keys: readers ignore keys they do not know).
"""

from __future__ import annotations

import json
import types
import typing
from pathlib import Path
from typing import Any

import attrs

from host.appserver import protocol as p
from host.appserver.server import METHODS
from host.clients.events import EVENT_TYPES
from host.serialization import camel

DIALECT = "https://json-schema.org/draft/2020-12/schema"

SERVER_REQUESTS: dict[str, tuple[type, type]] = {
    "approval/request": (p.ApprovalRequestParams, p.ApprovalResponse),
    "userInput/request": (p.UserInputRequestParams, p.UserInputResponse),
}
"""The server's requests to a client: params, and the result the client answers with."""

ERROR: dict[str, Any] = {
    "type": "object",
    "required": ["code", "message", "data"],
    "properties": {
        "code": {"type": "integer"},
        "message": {"type": "string"},
        "data": {
            "type": "object",
            "required": ["code"],
            "properties": {"code": {"type": "string"}},
        },
    },
}

_PLAIN = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}


class _Builder:
    """One document: the root class and the classes it names, under ``$defs``."""

    def __init__(self, closed: bool) -> None:
        self.closed = closed
        self.defs: dict[str, Any] = {}

    def of(self, kind: Any) -> dict[str, Any]:
        origin, args = typing.get_origin(kind), typing.get_args(kind)
        if kind in _PLAIN:
            return {"type": _PLAIN[kind]}
        if kind is Any:
            return {}
        if origin is typing.Literal:
            return {"enum": list(args)}
        if origin in (typing.Union, types.UnionType):
            return {"anyOf": [self.of(arg) for arg in args]}
        if origin is list:
            return {"type": "array", "items": self.of(args[0])}
        if origin is dict:
            return {"type": "object", "additionalProperties": self.of(args[1])}
        if attrs.has(kind):
            if kind.__name__ not in self.defs:
                self.defs[kind.__name__] = {}  # placeholder against recursion
                self.defs[kind.__name__] = self.object(kind)
            return {"$ref": f"#/$defs/{kind.__name__}"}
        raise TypeError(f"no JSON Schema for {kind!r}")

    def object(self, cls: type) -> dict[str, Any]:
        fields = attrs.fields(attrs.resolve_types(cls))
        made: dict[str, Any] = {
            "type": "object",
            "properties": {camel(f.name): self.of(f.type) for f in fields},
            "required": [camel(f.name) for f in fields if f.default is attrs.NOTHING],
        }
        if cls.__doc__:
            made["description"] = " ".join(cls.__doc__.split())
        if self.closed:
            made["additionalProperties"] = False
        return made


def schema_of(cls: type, *, closed: bool) -> dict[str, Any]:
    """A standalone schema of ``cls`` (``closed``: unknown keys refused)."""
    builder = _Builder(closed)
    root = builder.object(cls)
    builder.defs.pop(cls.__name__, None)
    document = {"$schema": DIALECT, "title": cls.__name__, **root}
    if builder.defs:
        document["$defs"] = builder.defs
    return document


def documents() -> dict[str, dict[str, Any]]:
    """Every message's schema, by name (module docstring)."""
    made: dict[str, dict[str, Any]] = {}
    requests: dict[str, tuple[type, type]] = {
        "initialize": (p.InitializeParams, p.InitializeResult)
    }
    requests.update({name: (params, result) for name, (params, result, _) in METHODS.items()})
    for name, (params, result) in requests.items():
        made[f"{name}.params"] = schema_of(params, closed=True)
        made[f"{name}.result"] = schema_of(result, closed=False)
    for event in EVENT_TYPES:
        made[f"{event.METHOD}.params"] = schema_of(event, closed=False)
    for name, (params, result) in SERVER_REQUESTS.items():
        made[f"{name}.params"] = schema_of(params, closed=False)
        made[f"{name}.result"] = schema_of(result, closed=True)
    made["error"] = {"$schema": DIALECT, "title": "Error", **ERROR}
    return made


def write(out: Path) -> list[Path]:
    """Write every document into ``out`` (made if missing); the files written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, document in documents().items():
        path = out / f"{name.replace('/', '.')}.json"
        path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written
