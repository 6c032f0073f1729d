"""A small, strict reader for the front matter of a Markdown profile.

The file starts with a ``---`` line; the block ends at the next ``---`` line; the rest is the
body. Inside the block every line is blank, a ``# comment``, ``key: value`` or, under a key
with an empty value, a ``- item`` of a list. Values are YAML-like scalars: ``true``/``false``,
``null``/``~``, integers, ``"double"`` (JSON escapes) or ``'single'`` quoted strings, or plain
text (`` #`` starts a comment); ``[a, b]`` is a list on one line. Nothing else (nested
mappings, block scalars, anchors, tabs for indentation) is accepted: a profile either reads
unambiguously or is reported. No YAML dependency: the format needs a dozen rules, and a full
YAML reader would accept (and silently reinterpret) far more than a profile should contain.
"""

from __future__ import annotations

import json
import re

Scalar = str | int | bool | None
Value = Scalar | list[Scalar]

_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(?:[ \t]+(.*))?")
_INT = re.compile(r"[-+]?[0-9]+")
_DOUBLE = re.compile(r'"((?:[^"\\]|\\.)*)"(?:\s+#.*)?')
_SINGLE = re.compile(r"'((?:[^']|'')*)'(?:\s+#.*)?")
_COMMENT = re.compile(r"(?:^|\s)#.*$")


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
    """The ``key -> value`` pairs of a front-matter block (see the module docstring)."""
    result: dict[str, Value] = {}
    list_key: str | None = None
    for number, raw in enumerate(lines, start=first_line):
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = line[: len(line) - len(line.lstrip())]
        if "\t" in indent:
            raise FrontMatterError(f"line {number}: tabs are not allowed for indentation")
        if stripped == "-" or stripped.startswith("- "):
            if list_key is None:
                raise FrontMatterError(f"line {number}: list item outside a list")
            items = result[list_key]
            if not isinstance(items, list):
                items = []
                result[list_key] = items
            items.append(parse_scalar(stripped[1:].strip(), number, list_key))
            continue
        if indent:
            raise FrontMatterError(
                f"line {number}: unexpected indentation (nested values are not supported)"
            )
        match = _KEY.fullmatch(line)
        if match is None:
            raise FrontMatterError(f"line {number}: expected 'key: value'")
        key, rest = match.group(1), (match.group(2) or "").strip()
        if key in result:
            raise FrontMatterError(f"given twice (line {number})", key)
        if rest == "" or rest.startswith("#"):
            result[key] = None
            list_key = key
        else:
            result[key] = parse_value(rest, number, key)
            list_key = None
    return result


def parse_value(text: str, line: int, key: str) -> Value:
    """One value written after ``key:`` on ``line``."""
    if text.startswith(("|", ">")):
        raise FrontMatterError(
            f"line {line}: block scalars ('|', '>') are not supported; write it on one line", key
        )
    if text.startswith(("{", "&", "*", "!")):
        raise FrontMatterError(f"line {line}: only plain values and lists are supported", key)
    if text.startswith("["):
        inner = _COMMENT.sub("", text).rstrip() if not _quoted_tail(text) else text
        if not inner.endswith("]"):
            raise FrontMatterError(f"line {line}: list is not closed by ']'", key)
        body = inner[1:-1].strip()
        if not body:
            return []
        return [parse_scalar(part.strip(), line, key) for part in _split_commas(body, line, key)]
    return parse_scalar(text, line, key)


def parse_scalar(text: str, line: int, key: str) -> Scalar:
    """One scalar: quoted string, boolean, null, integer or plain text."""
    if text.startswith('"'):
        match = _DOUBLE.fullmatch(text)
        if match is None:
            raise FrontMatterError(f"line {line}: unterminated or malformed quoted string", key)
        try:
            value = json.loads(f'"{match.group(1)}"')
        except json.JSONDecodeError as error:
            raise FrontMatterError(f"line {line}: bad escape in quoted string", key) from error
        return str(value)
    if text.startswith("'"):
        match = _SINGLE.fullmatch(text)
        if match is None:
            raise FrontMatterError(f"line {line}: unterminated or malformed quoted string", key)
        return match.group(1).replace("''", "'")
    plain = _COMMENT.sub("", text).strip()
    lowered = plain.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("null", "~", ""):
        return None
    if _INT.fullmatch(plain):
        return int(plain)
    return plain


def _quoted_tail(text: str) -> bool:
    return '"' in text or "'" in text


def _split_commas(body: str, line: int, key: str) -> list[str]:
    """Split a one-line list on commas outside quotes."""
    parts: list[str] = []
    current: list[str] = []
    quote: str | None = None
    for char in body:
        if quote is not None:
            current.append(char)
            if char == quote:
                quote = None
        elif char in "\"'":
            quote = char
            current.append(char)
        elif char == ",":
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    if quote is not None:
        raise FrontMatterError(f"line {line}: unterminated quoted string in list", key)
    parts.append("".join(current))
    return parts
