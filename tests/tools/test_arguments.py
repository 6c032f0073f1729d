"""A tool's arguments in one shape: each form (a typed function, an attrs ``Params`` class, a
JSON Schema given as is) makes ``tool.arguments``, with the schema the model is given and
``parse(raw)``, which builds what ``execute`` receives or refuses in one line."""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path
from typing import Any

import attrs
import pytest

import host
from host.tools import Tool, ToolExec, schema_tool, tool

HOST = os.path.join(os.path.realpath(Path(host.__file__).parent), "")


@tool
async def shout(text: str, times: int = 1) -> str:
    """Shout the text."""
    return text.upper() * times


@attrs.frozen
class ShoutArgs:
    text: str
    times: int = 1


@tool("shout", "Shout the text.", ShoutArgs)
async def shout_params(args: ShoutArgs, exec: ToolExec) -> str:
    return args.text.upper() * args.times


SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string"}, "times": {"type": "integer"}},
    "required": ["text"],
}


def text_required(raw: Any) -> list[str]:
    return [] if isinstance(raw.get("text"), str) else ["text: required string"]


async def shout_dict(arguments: dict[str, Any], exec: ToolExec) -> str:
    return str(arguments["text"]).upper()


shout_schema = schema_tool("shout", "Shout the text.", SCHEMA, shout_dict, check=text_required)
FORMS = [shout, shout_params, shout_schema]


@pytest.mark.parametrize("made", FORMS, ids=["function", "params", "schema"])
def test_every_form_offers_its_arguments_schema_as_the_tools_parameters(made: Tool) -> None:
    assert made.arguments.schema is made.parameters
    assert made.parameters["required"] == ["text"]
    assert made.arguments.params is made.params


@pytest.mark.parametrize("made", FORMS, ids=["function", "params", "schema"])
def test_every_forms_schema_is_a_value_read_without_running_anything(made: Tool) -> None:
    """Describing the tools to the model on every request builds no schema: once made (an
    attrs class's with the tool, a function's on first use), reading it enters no function of
    the host."""
    made.parameters  # noqa: B018 - a function tool builds its schema on first use
    entered: list[str] = []

    def profile(frame: types.FrameType, event: str, arg: object) -> None:
        if event == "call" and os.path.realpath(frame.f_code.co_filename).startswith(HOST):
            entered.append(frame.f_code.co_qualname)

    sys.setprofile(profile)
    try:
        for _ in range(3):
            made.arguments.schema  # noqa: B018
    finally:
        sys.setprofile(None)
    assert entered == []


@pytest.mark.parametrize(
    ("made", "parsed"),
    [
        (shout, {"text": "hi", "times": 2}),
        (shout_params, ShoutArgs("hi", 2)),
        (shout_schema, {"text": "hi", "times": 2}),
    ],
    ids=["function", "params", "schema"],
)
def test_every_form_parses_raw_arguments_into_what_execute_receives(
    made: Tool, parsed: Any
) -> None:
    raw = {"text": "hi", "times": 2}
    assert made.arguments.parse(raw) == parsed
    assert made.arguments.parse(raw) is not raw  # the model's dict is never handed on


@pytest.mark.parametrize(
    ("made", "raw", "problem"),
    [
        (shout, {}, "text: required"),
        (shout, ["hi"], "arguments: expected object, got list"),
        (shout_params, {}, "text: required"),
        (shout_schema, {}, "text: required string"),
        (shout_schema, "hi", "arguments: expected object, got str"),
    ],
)
def test_every_form_refuses_invalid_arguments_in_one_line(
    made: Tool, raw: Any, problem: str
) -> None:
    with pytest.raises(ValueError) as refused:
        made.arguments.parse(raw)
    assert str(refused.value) == problem


PLUGIN_MODULE = '''
from __future__ import annotations

from typing import Literal

import attrs

from host.tools import ToolExec, tool

Scope = Literal["children", "descendants"]


@attrs.frozen
class Where:
    scope: Scope = "children"


@attrs.frozen
class ListArgs:
    where: Where
    limit: int = 10


@tool("list_things", "List things.", ListArgs)
async def list_things(args: ListArgs, exec: ToolExec) -> str:
    return args.where.scope
'''


def test_a_params_tool_parses_after_its_module_was_unloaded() -> None:
    """A reload of one plugin unloads every module of its package, also one a sibling
    plugin's tool was declared in; that tool's string annotations must already be bound
    (a first call after the unload otherwise fails to resolve them: NameError)."""
    module = types.ModuleType("agent_host_test_unloaded_params")
    sys.modules[module.__name__] = module
    try:
        exec(compile(PLUGIN_MODULE, "<plugin>", "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]  # as a reload of a sibling plugin leaves it
    made: Tool = module.list_things
    raw = {"where": {"scope": "descendants"}, "limit": 2}
    parsed = made.arguments.parse(raw)
    assert (parsed.where.scope, parsed.limit) == ("descendants", 2)
