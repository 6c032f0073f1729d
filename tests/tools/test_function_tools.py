"""Function tools: ``@tool`` on a typed function — its manual, schema, calls and refusals."""

from __future__ import annotations

import dataclasses
import enum
import functools
from typing import Any, Literal, TypedDict

import attrs
import pytest

from host import hookimpl
from host.services import Services
from host.testing import MakeHost, call_tool
from host.tools import Tool, ToolResult, tool
from host.tools.execute import run_tool
from host.tools.tool import ToolExec  # the engine's, which an agentless call builds


@attrs.frozen
class When:
    day: str = attrs.field(metadata={"description": "Weekday."})
    hour: int = 9


@dataclasses.dataclass
class Place:
    city: str
    floor: int | None = None


class Meta(TypedDict, total=False):
    source: str


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@tool
async def note_add(
    text: str,
    tags: list[str] | None = None,
    kind: Literal["todo", "idea"] = "idea",
    when: When | None = None,
    place: Place | None = None,
    meta: Meta | None = None,
    weight: float = 1.0,
    color: Color = Color.RED,
    counts: dict[str, int] | None = None,
) -> dict[str, Any]:
    """Add a note to the notebook.

    The note is kept until removed.

    Args:
        text: The note's text.
        tags (list[str]): Labels to file it under,
            as many as needed.
        when: When it is due.

    Returns:
        The stored note.
    """
    return {
        "text": text,
        "tags": tags,
        "kind": kind,
        "when": repr(when),
        "place": repr(place),
        "meta": meta,
        "weight": repr(weight),
        "color": repr(color),
        "counts": counts,
    }


def exec_() -> ToolExec:
    return ToolExec(agent=None, ctx=Services(), tool_call_id="call-7")


async def run(made: Tool, args: Any) -> ToolResult:
    return await run_tool(made, made.name, args, exec_())


def test_the_docstring_is_the_manual() -> None:
    assert note_add.name == "note_add"
    assert note_add.description == "Add a note to the notebook.\n\nThe note is kept until removed."
    properties = note_add.parameters["properties"]
    assert properties["text"]["description"] == "The note's text."
    assert properties["tags"]["description"] == "Labels to file it under, as many as needed."
    assert properties["when"]["description"] == "When it is due."
    assert "description" not in properties["weight"]


def test_the_schema_comes_from_the_signature() -> None:
    schema = note_add.parameters
    assert schema["required"] == ["text"]
    assert schema["additionalProperties"] is False
    properties = schema["properties"]
    assert properties["text"] == {"type": "string", "description": "The note's text."}
    assert properties["tags"]["anyOf"] == [
        {"type": "array", "items": {"type": "string"}},
        {"type": "null"},
    ]
    assert properties["kind"] == {"type": "string", "enum": ["todo", "idea"], "default": "idea"}
    assert properties["weight"] == {"type": "number", "default": 1.0}
    assert properties["color"] == {"type": "string", "enum": ["red", "blue"], "default": "red"}
    assert properties["counts"]["anyOf"][0] == {
        "type": "object",
        "additionalProperties": {"type": "integer"},
    }
    when, place, meta = (properties[name]["anyOf"][0] for name in ("when", "place", "meta"))
    assert when == {
        "type": "object",
        "properties": {
            "day": {"type": "string", "description": "Weekday."},
            "hour": {"type": "integer", "default": 9},
        },
        "required": ["day"],
        "additionalProperties": False,
    }
    assert place["properties"]["floor"] == {"type": ["integer", "null"]}
    assert place["required"] == ["city"]
    assert meta == {
        "type": "object",
        "properties": {"source": {"type": "string"}},
        "additionalProperties": False,
    }
    assert note_add.parameters is note_add.parameters  # built once


async def test_arguments_arrive_as_the_annotated_types() -> None:
    result = await run(
        note_add,
        {
            "text": "buy milk",
            "tags": None,
            "when": {"day": "mon"},
            "place": {"city": "Oslo", "floor": None},
            "meta": {"source": "mail"},
            "weight": 2,
            "color": "blue",
            "counts": {"a": 1},
        },
    )
    assert not result.is_error, result.text
    assert result.structured == {
        "text": "buy milk",
        "tags": None,
        "kind": "idea",
        "when": "When(day='mon', hour=9)",
        "place": "Place(city='Oslo', floor=None)",
        "meta": {"source": "mail"},
        "weight": "2.0",
        "color": "<Color.BLUE: 'blue'>",
        "counts": {"a": 1},
    }


async def test_bad_arguments_are_one_error_the_model_sees() -> None:
    result = await run(note_add, {"text": 5, "kind": "chore", "when": {"hour": 3}, "extra": 1})
    assert result == ToolResult.error(
        "invalid arguments for note_add: text: expected string, got integer; "
        "kind: must be one of 'todo', 'idea'; when.day: required; extra: unknown key"
    )
    assert await run(note_add, ["buy milk"]) == ToolResult.error(
        "invalid arguments for note_add: arguments: expected object, got list"
    )


async def test_a_tool_exec_parameter_receives_the_call_and_stays_out_of_the_schema() -> None:
    @tool(name="whoami", description="Say the call id.", concurrency_safe=True)
    def whoami(exec: ToolExec, loud: bool = False) -> str:
        return exec.tool_call_id.upper() if loud else exec.tool_call_id

    assert (whoami.name, whoami.description, whoami.concurrency_safe) == (
        "whoami",
        "Say the call id.",
        True,
    )
    assert list(whoami.parameters["properties"]) == ["loud"]
    assert await run(whoami, {"loud": True}) == ToolResult("CALL-7")


async def test_what_a_function_returns_becomes_the_result() -> None:
    @tool
    async def nothing() -> None:
        """Do nothing."""

    @tool
    async def counted(n: int) -> list[int]:
        """Count."""
        return list(range(n))

    @tool
    async def opaque() -> object:
        """Return something without a JSON form."""
        return object()

    @tool
    async def chosen() -> ToolResult:
        """Fail on purpose."""
        return ToolResult.error("no")

    assert await run(nothing, {}) == ToolResult("")
    assert await run(counted, {"n": 3}) == ToolResult("[0, 1, 2]", structured=[0, 1, 2])
    refused = await run(opaque, {})
    assert refused.is_error and refused.text.startswith("opaque returned object, not JSON: ")
    assert await run(chosen, {}) == ToolResult.error("no")


def test_the_schema_is_built_on_first_use_not_at_decoration() -> None:
    @tool
    async def later(item: Later) -> str:  # Later is defined below: resolved when first used
        """Take a later thing."""
        return item.name

    assert later.signature is not None
    assert later.parameters["properties"]["item"]["required"] == ["name"]


@attrs.frozen
class Later:
    name: str


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def f(x): pass", 'tool "f": parameter "x": no type annotation'),
        ("def f(*items: str): pass", 'tool "f": parameter "items": *items is not supported'),
        ("def f(**named: str): pass", 'tool "f": parameter "named": **named is not supported'),
        ("def f(x: int, /): pass", 'tool "f": parameter "x": positional-only is not supported'),
        ("def f(x: complex): pass", 'tool "f": parameter "x": complex has no JSON Schema'),
        (
            "def f(x: dict[int, str]): pass",
            'tool "f": parameter "x": dict[int, str] (object keys are strings)',
        ),
        (
            "def f(x: 'Missing'): pass",
            "tool \"f\": cannot resolve its annotations: name 'Missing' is not defined",
        ),
    ],
)
def test_a_declaration_with_no_schema_is_refused_naming_the_parameter(
    source: str, expected: str
) -> None:
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    made = tool(namespace["f"])
    with pytest.raises(TypeError) as raised:
        made.parameters  # noqa: B018
    assert str(raised.value) == expected


@attrs.frozen
class Inner:
    value: complex


@attrs.frozen
class Outer:
    inner: Inner


def test_a_nested_field_with_no_schema_is_named_by_its_path() -> None:
    def f(outer: Outer) -> str:
        return ""

    with pytest.raises(TypeError, match=r'^tool "f": parameter "outer.inner.value": complex'):
        tool(f).parameters  # noqa: B018


class Broken:
    """A plugin registering a tool whose parameter has no annotation."""

    name = "broken_notes"

    @staticmethod
    @hookimpl
    def register_tools(register: Any) -> None:
        def bad(text) -> str:
            return str(text)

        register(tool(bad))


class Notes:
    """A healthy plugin with one function tool."""

    name = "notes"

    @staticmethod
    @hookimpl
    def register_tools(register: Any) -> None:
        register(note_add)


async def test_registration_refuses_the_tool_and_only_its_plugin_fails(
    make_host: MakeHost,
) -> None:
    host = make_host(Broken, Notes)
    broken = host.plugins.records["broken_notes"]
    assert (broken.state, broken.error) == (
        "failed",
        'TypeError: tool "bad": parameter "text": no type annotation',
    )
    assert host.plugins.records["notes"].state == "active"
    assert "bad" not in host.tools
    result = await call_tool(host, "note_add", {"text": "hi"})
    assert result.structured["text"] == "hi"


def test_the_attrs_form_keeps_working() -> None:
    @attrs.frozen
    class Args:
        text: str

    @tool("echo", "Echo the text.", Args)
    async def echo(args: Args, exec: ToolExec) -> str:
        return args.text

    assert (echo.name, echo.needs_agent, echo.signature) == ("echo", True, None)
    assert echo.parameters["required"] == ["text"]
    with pytest.raises(TypeError, match="complex has no JSON Schema"):

        @attrs.frozen
        class Bad:
            value: complex

        tool("bad", "Bad.", Bad)


def test_annotations_as_objects_strings_and_nested_forward_references_resolve() -> None:
    namespace: dict[str, Any] = {}
    exec(  # no ``from __future__ import annotations``: the annotations are objects
        "import attrs\n"
        "@attrs.frozen\n"
        "class Item:\n"
        "    name: str\n"
        "def plain(tags: list[str] | None = None, *, limit: int = 3) -> str: return ''\n"
        "def nested(items: list['Item']) -> str: return ''\n",
        namespace,
    )
    plain = tool(namespace["plain"]).parameters
    assert plain["properties"] == {
        "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]},
        "limit": {"type": "integer", "default": 3},
    }
    nested = tool(namespace["nested"]).parameters["properties"]["items"]
    assert nested["items"]["required"] == ["name"]


async def test_a_wrapped_function_is_read_through_its_wrapper() -> None:
    def logged(function: Any) -> Any:
        @functools.wraps(function)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            return "logged " + await function(*args, **kwargs)

        return wrapper

    @tool
    @logged
    async def greet(who: str, *, loud: bool = False) -> str:
        """Greet someone."""
        return who.upper() if loud else who

    assert greet.parameters["required"] == ["who"]
    assert await run(greet, {"who": "ada", "loud": True}) == ToolResult("logged ADA")


async def test_partials_and_callable_objects_are_function_tools() -> None:
    async def prefixed(prefix: str, text: str) -> str:
        return prefix + text

    class Greeter:
        async def __call__(self, name: str, loud: bool = False) -> str:
            return name.upper() if loud else name

    partial = tool(functools.partial(prefixed, "> "), name="quote", description="Quote it.")
    greeter = tool(Greeter(), name="greet", description="Greet.")
    assert list(partial.parameters["properties"]) == ["text"]
    assert greeter.parameters["required"] == ["name"]
    assert await run(partial, {"text": "hi"}) == ToolResult("> hi")
    assert await run(greeter, {"name": "ada", "loud": True}) == ToolResult("ADA")


def test_a_wrong_call_of_tool_is_one_clear_error() -> None:
    with pytest.raises(TypeError, match=r"^tool\(\) takes a function .* got 2 positional"):
        tool("name", "description")  # type: ignore[call-overload]


async def test_a_description_function_that_raises_does_not_end_the_turn(
    make_harness: Any,
) -> None:
    from host.agents import say

    def broken() -> str:
        raise RuntimeError("profiles not loaded")

    @tool(name="flaky", description=broken)  # type: ignore[call-overload]
    async def flaky(x: int) -> str:
        return "ok"

    h = make_harness()
    h.add_tool(flaky)
    root = await h.root()
    ended: list[str] = []
    root.on_turn_end(lambda outcome: ended.append(outcome.stop_reason))
    h.model.script("root", say("hi"))
    root.followup("hello")
    await root.wait_idle()
    assert ended == ["completed"]
    assert flaky.describe() == (
        "(the description of flaky failed: RuntimeError: profiles not loaded)"
    )
