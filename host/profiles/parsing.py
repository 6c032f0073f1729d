"""From the text of a Markdown profile to a ``Profile``, or one ``Diagnostic`` saying why not.

Fields: ``name`` and ``description`` (required), ``tools`` and ``disallowed_tools`` (a list, or
one string separated by commas and/or spaces, of tool globs, which match a tool's name or the
plugin that registered it, ``host.tools.globs``: ``mcp.git`` is every tool of the MCP server
``git``; ``Tool(args)`` keeps the name before the parenthesis; ``tools: "*"`` means every
tool), ``model`` (``inherit`` = the default model), ``max_steps`` (positive integer),
``background`` (boolean), ``mcp_servers`` (MCP server names, a list or one string like
``tools``; ``[]``: no MCP tools), ``memory`` (``user``, ``project`` or ``local``: where its
persistent memory lives). Unknown fields are an error, so a typo never goes unnoticed. The
checked fields are structured with cattrs into ``FrontMatter``.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import attrs
import cattrs

from host.profiles.frontmatter import FrontMatterError, Value, split
from host.profiles.model import Diagnostic, Profile, Source
from host.schema import schema_for, validate
from host.serialization import converter
from host.subagents.descriptors import MemoryScope

NAME_MAX = 64
DESCRIPTION_MAX = 1024
PERSONA_MAX = 64 * 1024
_NAME = re.compile(r"[^\W_][\w.-]*")
_TOOL = re.compile(r"[A-Za-z0-9_.*?\[\]-]+")  # a tool glob
_SERVER = re.compile(r"[A-Za-z0-9_-]{1,32}")  # an MCP server's name (its sub-plugin's)
INHERIT = "inherit"


@attrs.frozen
class FrontMatter:
    """The front-matter fields of a profile, type-checked (lists already split)."""

    name: str
    description: str
    tools: list[str] | None = None
    disallowed_tools: list[str] | None = None
    model: str | None = None
    max_steps: int | None = None
    background: bool | None = None
    mcp_servers: list[str] | None = None
    memory: MemoryScope | None = None


FIELDS = tuple(field.name for field in attrs.fields(FrontMatter))


class Invalid(Exception):
    """One problem with one field (``field`` None: the file as a whole)."""

    def __init__(self, problem: str, field: str | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.field = field


def parse_profile(
    text: str, *, path: str, source: Source, plugin: str | None = None
) -> Profile | Diagnostic:
    """The profile written in ``text`` (from ``path``), or the diagnostic explaining why not."""
    try:
        data, body = split(text)
        return build(data, body, path=path, source=source, plugin=plugin)
    except FrontMatterError as error:
        return Diagnostic(path, error.problem, field=error.field, source=source)
    except Invalid as error:
        return Diagnostic(path, error.problem, field=error.field, source=source)


def build(
    data: dict[str, Value], body: str, *, path: str, source: Source, plugin: str | None
) -> Profile:
    """Check and structure the front matter; raises ``Invalid`` for the first problem."""
    for key in data:
        if key not in FIELDS:
            raise Invalid(f"unknown field (known: {', '.join(FIELDS)})", key)
    present: dict[str, Any] = {k: v for k, v in data.items() if v is not None}
    for key in ("name", "description"):
        if key not in present:
            raise Invalid("required", key)
    for key in ("tools", "disallowed_tools", "mcp_servers"):
        if isinstance(present.get(key), str):
            present[key] = split_tool_list(present[key])
    problems = validate(schema_for(FrontMatter), present)
    if problems:
        field, _, problem = problems[0].partition(": ")
        raise Invalid(problem, field.split("[", 1)[0])
    try:
        fields = converter.structure(present, FrontMatter)
    except (cattrs.BaseValidationError, ValueError, TypeError) as error:  # pragma: no cover
        raise Invalid(f"cannot be read: {error}") from error
    name = check_name(fields.name)
    if len(body) > PERSONA_MAX:
        raise Invalid(f"the body (persona) is longer than {PERSONA_MAX} characters")
    return Profile(
        name=f"{plugin}:{name}" if plugin is not None else name,
        description=check_description(fields.description),
        source=source,
        persona=body or None,
        tools=check_tools(fields.tools, "tools"),
        disallowed_tools=check_tools(fields.disallowed_tools, "disallowed_tools") or (),
        model=check_model(fields.model),
        max_steps=check_max_steps(fields.max_steps),
        background=fields.background,
        mcp_servers=check_servers(fields.mcp_servers),
        memory=fields.memory,
        path=path,
        plugin=plugin,
    )


def check_name(name: str) -> str:
    """A name is a word: letters, digits, ``_``, ``-``, ``.``; NFKC form; at most 64 chars."""
    if not name.strip():
        raise Invalid("must not be empty", "name")
    if len(name) > NAME_MAX:
        raise Invalid(f"longer than {NAME_MAX} characters", "name")
    if ":" in name:
        raise Invalid("must not contain ':' (reserved for '<plugin>:<name>')", "name")
    if not _NAME.fullmatch(name):
        raise Invalid(
            f"{name!r} is not a valid name (letters, digits, '-', '_' and '.', "
            "starting with a letter or digit)",
            "name",
        )
    if unicodedata.normalize("NFKC", name) != name:
        raise Invalid(f"{name!r} is not in Unicode NFKC form", "name")
    return name


def check_description(description: str) -> str:
    """One line of printable text (whitespace runs collapse), at most 1024 characters."""
    text = " ".join(description.split())
    if not text:
        raise Invalid("must not be empty", "description")
    if any(unicodedata.category(char) in ("Cc", "Cf") for char in text):
        raise Invalid("contains control or format characters", "description")
    if len(text) > DESCRIPTION_MAX:
        raise Invalid(f"longer than {DESCRIPTION_MAX} characters", "description")
    return text


def split_tool_list(text: str) -> list[str]:
    """``"a, b c"`` → ``["a", "b", "c"]``; separators inside parentheses are kept."""
    items: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        if depth == 0 and (char == "," or char.isspace()):
            if current:
                items.append("".join(current))
            current = []
        else:
            current.append(char)
    if current:
        items.append("".join(current))
    return items


def check_tools(items: list[str] | None, field: str) -> tuple[str, ...] | None:
    """Tool globs (``Tool(args)`` → ``Tool``), duplicates dropped; ``["*"]`` → None (all)."""
    if items is None:
        return None
    names: list[str] = []
    for item in items:
        name = item.strip().split("(", 1)[0].strip()
        if name == "*":
            if field != "tools" or len(items) != 1:
                raise Invalid("'*' (every tool) must stand alone in tools", field)
            return None
        if not _TOOL.fullmatch(name):
            raise Invalid(f"{item!r} is not a tool name", field)
        if name not in names:
            names.append(name)
    return tuple(names)


def check_servers(items: list[str] | None) -> tuple[str, ...] | None:
    """MCP server names (``[A-Za-z0-9_-]``, at most 32 characters), duplicates dropped."""
    if items is None:
        return None
    names: list[str] = []
    for item in items:
        name = item.strip()
        if not _SERVER.fullmatch(name):
            raise Invalid(
                f"{item!r} is not an MCP server name (1-32 of A-Z a-z 0-9 _ -)", "mcp_servers"
            )
        if name not in names:
            names.append(name)
    return tuple(names)


def check_model(model: str | None) -> str | None:
    """A model name; ``inherit`` (any case) means the default model."""
    if model is None:
        return None
    text = model.strip()
    if not text or any(unicodedata.category(c) in ("Cc", "Cf") for c in text):
        raise Invalid("must be a model name", "model")
    return None if text.lower() == INHERIT else text


def check_max_steps(steps: int | None) -> int | None:
    """A positive number of model steps per turn."""
    if steps is not None and steps < 1:
        raise Invalid(f"must be a positive integer, got {steps}", "max_steps")
    return steps
