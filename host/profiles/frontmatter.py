"""The front matter of a Markdown profile, read with PyYAML (``ProfileLoader``).

The file starts with a ``---`` line; the block ends at the next ``---`` line; the rest is the
body. The block is YAML holding ``key: value`` pairs whose values are scalars or lists of
scalars (``[a, b]`` on one line, or ``- item`` lines under the key). Plain scalars are
``true``/``false``, ``null``/``~``/nothing, decimal integers or text: unlike YAML 1.1,
``yes``, ``1.5`` and dates stay text and ``010`` is ten. A key given twice, nested
mappings, block scalars (``|``, ``>``), anchors, aliases, tags and tab indentation are
reported, one line naming the file line (and the key, when there is one): a profile either
reads unambiguously or is reported. As Claude Code does, a plain value holding ``: ``
(``description: Use it when: …``), which YAML rejects, reads as text (``quote_plain_values``).
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

Scalar = str | int | bool | None
Value = Scalar | list[Scalar]

_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:")
_PLAIN = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):[ \t]+([^\s\"'|>\[{&*!#%@`].*)")
_STR = "tag:yaml.org,2002:str"
_SCALAR_TAGS = (_STR, "tag:yaml.org,2002:int", "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null")
_NOT_PLAIN = "only plain values and lists are supported"
_PROBLEMS = {
    "while scanning a quoted scalar": "unterminated or malformed quoted string",
    "while scanning a double-quoted scalar": "bad escape in quoted string",
    "while parsing a flow sequence": "list is not closed by ']'",
    "while scanning a simple key": "expected 'key: value'",
}
"""PyYAML's contexts for the syntax errors a profile is likely to hold, in this reader's words."""
_LoadError = (yaml.reader.ReaderError, yaml.MarkedYAMLError)
"""What PyYAML raises while loading: a character it refuses, or an error at a mark."""


class FrontMatterError(Exception):
    """The front matter cannot be read; ``field`` is the key involved, if any."""

    def __init__(self, problem: str, field: str | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.field = field


def split(text: str) -> tuple[dict[str, Value], str]:
    """The front matter of ``text`` as ``key -> value`` and the body (stripped)."""
    block, body = split_raw(text)
    return parse_block(block, first_line=2), body


def split_raw(text: str) -> tuple[list[str], str]:
    """The lines of the front-matter block of ``text`` (file line 2 onwards) and the body
    (stripped), for any reader of the block."""
    lines = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if not lines or lines[0].rstrip() != "---":
        raise FrontMatterError("no front matter: the file must start with a '---' line")
    for index in range(1, len(lines)):
        if lines[index].rstrip() == "---":
            return lines[1:index], "\n".join(lines[index + 1 :]).strip()
    raise FrontMatterError("front matter is not closed by a '---' line")


def parse_block(lines: list[str], *, first_line: int = 1) -> dict[str, Value]:
    """The ``key -> value`` pairs of a front-matter block (see the module docstring);
    ``first_line`` is the file line of ``lines[0]``, for the errors."""
    for number, line in enumerate(lines, start=first_line):
        if "\t" in line[: len(line) - len(line.lstrip())] and line.strip():
            raise FrontMatterError(f"line {number}: tabs are not allowed for indentation")
    try:
        return ProfileLoader(lines, first_line).read()
    except _LoadError as error:
        repaired = quote_plain_values(lines)
        if repaired == lines:
            raise _translate(error, lines, first_line) from None
        try:
            return ProfileLoader(repaired, first_line).read()
        except _LoadError:
            raise _translate(error, lines, first_line) from None


class ProfileLoader(yaml.SafeLoader):
    """PyYAML's safe loader reading plain scalars as the module docstring says (no ``yes``
    or ``on`` booleans, octal or sexagesimal numbers, floats or dates), refusing a key given
    twice and, in a profile, anything but scalars and lists of scalars under top-level keys."""

    def __init__(self, lines: list[str], first_line: int) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines
        self.first_line = first_line

    def read(self) -> dict[str, Value]:
        """The block's ``key -> value`` pairs (``{}`` for an empty block)."""
        try:
            node = self.get_single_node()
            if node is None:
                return {}
            self.check_document(node)
            data: dict[str, Value] = self.construct_document(node)
            return data
        finally:
            self.dispose()

    def check_document(self, node: Node) -> None:
        """Refuse a block that is not ``key: value`` pairs of scalars or lists of scalars."""
        if isinstance(node, SequenceNode):
            raise self.fail("list item outside a list", node)
        if not isinstance(node, MappingNode):
            raise self.fail("expected 'key: value'", node)
        for key, value in node.value:
            if not isinstance(key, ScalarNode) or key.tag != _STR:
                raise self.fail("expected 'key: value'", key)
            if isinstance(value, MappingNode) and not value.flow_style:
                raise self.fail("unexpected indentation (nested values are not supported)", value)
            items = value.value if isinstance(value, SequenceNode) else [value]
            for item in items:
                self.check_scalar(item, key.value)

    def check_scalar(self, node: Node, key: str) -> None:
        """Refuse a value that is not a one-line scalar (``key`` names it in the error)."""
        if isinstance(node, ScalarNode) and node.style in ("|", ">"):
            problem = "block scalars ('|', '>') are not supported; write it on one line"
            raise self.fail(problem, node, key)
        if not isinstance(node, ScalarNode) or node.tag not in _SCALAR_TAGS:
            raise self.fail(_NOT_PLAIN, node, key)

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        """The mapping, refusing a key given twice."""
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                line = key_node.start_mark.line + self.first_line
                raise FrontMatterError(f"given twice (line {line})", str(key))
            seen.add(key)
        return super().construct_mapping(node, deep=deep)

    def fetch_anchor(self) -> None:
        """Anchors are refused (a profile has no values to share)."""
        raise self.fail(_NOT_PLAIN, None, self.key_on(self.line))

    fetch_alias = fetch_tag = fetch_anchor

    def fail(self, problem: str, node: Node | None, key: str | None = None) -> FrontMatterError:
        """``problem`` on the file line where ``node`` starts (the scanner's line for None)."""
        line = self.line if node is None else node.start_mark.line
        return FrontMatterError(f"line {line + self.first_line}: {problem}", key)

    def key_on(self, index: int) -> str | None:
        """The key that the block's line ``index`` starts with, if any."""
        match = _KEY.match(self.lines[index]) if index < len(self.lines) else None
        return match.group(1) if match else None


ProfileLoader.yaml_implicit_resolvers = {}  # only those added below
ProfileLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
ProfileLoader.add_implicit_resolver(
    "tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""]
)
ProfileLoader.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^[-+]?[0-9]+$"), list("-+0123456789")
)


def _construct_int(loader: ProfileLoader, node: ScalarNode) -> int:
    """A decimal integer (YAML 1.1 reads ``010`` as octal)."""
    return int(loader.construct_scalar(node), 10)


ProfileLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)


def _translate(
    error: yaml.reader.ReaderError | yaml.MarkedYAMLError, lines: list[str], first_line: int
) -> FrontMatterError:
    """A PyYAML error as one line naming the file line (and the key whose value it is in)."""
    if isinstance(error, yaml.reader.ReaderError):  # a character YAML does not allow
        line = "\n".join(lines)[: error.position].count("\n") + first_line
        return FrontMatterError(f"line {line}: {str(error).splitlines()[0]}")
    context, mark = error.context, error.context_mark
    if context in _PROBLEMS and mark is not None:
        match = _KEY.match(lines[mark.line]) if mark.line < len(lines) else None
        problem = f"line {mark.line + first_line}: {_PROBLEMS[context]}"
        key = match.group(1) if match and match.end() <= mark.column else None
        return FrontMatterError(problem, key)
    mark = error.problem_mark or mark
    where = f"line {mark.line + first_line}: " if mark is not None else ""
    return FrontMatterError(f"{where}{error.problem or context}")


def quote_plain_values(block: list[str]) -> list[str]:
    """``block`` with every top-level plain value that holds ``: `` (with its indented
    continuation lines) written as one double-quoted string. Claude Code reads a value such
    as ``description: Use it when: …`` as text although YAML does not (``: `` starts a
    mapping); quoted, it is the same text. Other values (quoted, block, flow, numbers…) are
    left as they are."""
    result: list[str] = []
    index = 0
    while index < len(block):
        line = block[index]
        index += 1
        match = _PLAIN.fullmatch(line)
        if match is None:
            result.append(line)
            continue
        end = index
        while end < len(block) and block[end][:1] in (" ", "\t") and block[end].strip():
            end += 1
        text = " ".join([match.group(2).strip(), *(part.strip() for part in block[index:end])])
        if not (": " in text or text.endswith(":")):
            result.append(line)
            continue
        result.append(f"{match.group(1)}: {json.dumps(text, ensure_ascii=False)}")
        index = end
    return result
