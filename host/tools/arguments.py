"""A tool's arguments in one shape, whatever form declared them.

Every tool holds one ``Arguments``: ``schema``, the JSON Schema the model is given, and
``parse(raw)``, which checks the model's raw arguments and builds what ``execute`` receives
(``ValueError`` in one line when they are invalid). The three forms of ``host.tools.tool``
each make one: an attrs ``Params`` class (``ParamsArguments``: an instance of the class), a
JSON Schema given as is (``SchemaArguments``: the dict) and a typed function's parameters
(``host.tools.signature.FunctionSignature``: the dict, structured per parameter when called);
the last two are ``ObjectArguments``, which share their ``parse``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Protocol

import attrs

from host.schema import JsonSchema, schema_for, validate

Check = Callable[[Any], list[str]]
"""Problems with raw arguments (one short line each); empty when they are valid."""


class Arguments(Protocol):
    """What a tool's arguments are: the type ``parse`` builds, the schema, the parse."""

    @property
    def params(self) -> type:
        """The type ``parse`` builds: the ``Params`` class, else ``dict``."""
        ...

    @property
    def schema(self) -> JsonSchema:
        """The arguments' JSON Schema (stable across calls; ``TypeError`` when there is none)."""
        ...

    def parse(self, raw: Any) -> Any:
        """Check ``raw`` and build what ``execute`` receives; ``ValueError`` in one line."""
        ...

    def declare(self) -> object:
        """Check the declaration once (at registration); ``TypeError`` naming what is refused."""
        ...


@attrs.frozen
class ParamsArguments:
    """Arguments declared by a frozen attrs class: validated against its schema, then built
    as an instance of it. The schema is made (and checked) when this is made."""

    params: type
    schema: JsonSchema = attrs.field(init=False, eq=False, repr=False)
    """The class's JSON Schema."""

    @schema.default
    def _schema(self) -> JsonSchema:
        return schema_for(self.params)  # an unsupported field type fails at declaration time

    def parse(self, raw: Any) -> Any:
        """An instance of ``params`` from valid ``raw``; ``ValueError`` otherwise."""
        problems = validate(self.schema, raw)
        if problems:
            raise ValueError("; ".join(problems))
        import cattrs  # on first call: keeps cattrs off start-up

        from host.serialization import converter

        try:
            return converter.structure(raw, self.params)
        except (cattrs.BaseValidationError, TypeError, ValueError) as error:
            raise ValueError(str(error)) from None

    def declare(self) -> None:
        """Nothing left to check: the schema was checked when this was made."""


class ObjectArguments:
    """Arguments received as a dict: ``parse`` refuses anything but an object, then asks
    ``check`` for problems. A JSON Schema given as is (``SchemaArguments``) and a typed
    function's parameters (``host.tools.signature.FunctionSignature``) are such arguments."""

    params: ClassVar[type] = dict
    check: Check
    """Problems with raw arguments, an object (one short line each); empty: valid."""

    def parse(self, raw: Any) -> dict[str, Any]:
        """``raw`` as a dict when it is an object without problems; ``ValueError`` otherwise
        (an argument list that is not an object is refused before the check)."""
        if not isinstance(raw, dict):
            raise ValueError(f"arguments: expected object, got {type(raw).__name__}")
        problems = self.check(raw)
        if problems:
            raise ValueError("; ".join(problems))
        return dict(raw)


@attrs.frozen
class SchemaArguments(ObjectArguments):
    """Arguments described by a JSON Schema given as is (say, by an MCP server): ``check``
    validates raw arguments against it, and ``execute`` receives them as a dict."""

    schema: JsonSchema
    check: Check

    def declare(self) -> None:
        """Nothing to check: the schema is the author's as given."""
