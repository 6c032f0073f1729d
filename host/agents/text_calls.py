"""Tool calls a model wrote as text instead of as native calls.

Small local models often answer a request that offers tools with the call as bare JSON —
``{"name": "add", "arguments": {"a": 17, "b": 25}}`` — or a list of such objects, or several
one per line, sometimes
inside a ```` ```json ```` fence or ``<tool_call>…</tool_call>`` tags, and the server returns
that as content. ``parse`` reads such a content as calls of offered tools (anything else is
None: it stays text); ``could_be_call`` says whether a content still arriving may turn out to
be one (a stream holds it back until it cannot). Pure functions, no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

FENCE = "```"
OPEN_TAG = "<tool_call>"
CLOSE_TAG = "</tool_call>"
PREFIX_CHARS = 64
"""How much of a content ``could_be_call`` looks at: its verdict rests on the opening alone."""

_FENCED = re.compile(r"\A```(?:json)?[ \t]*\n(?P<body>.*)\n?```\Z", re.S)
_TAGGED = re.compile(r"\s*<tool_call>(?P<body>.*?)</tool_call>\s*", re.S)


def parse(content: str, offered: Collection[str]) -> list[tuple[str, dict[str, Any]]] | None:
    """The ``(name, arguments)`` calls ``content`` is, in order, or None when it is not wholly
    calls of tools in ``offered``: one object ``{"name": …, "arguments": {…}}``, a list of
    them or several one after another, bare, fenced or in tags (one or more ``<tool_call>``
    blocks)."""
    text = content.strip()
    fenced = _FENCED.match(text)
    if fenced:
        text = fenced.group("body").strip()
    if text.startswith(OPEN_TAG):
        blocks = _tagged_blocks(text)
        if blocks is None:
            return None
        found: list[tuple[str, dict[str, Any]]] = []
        for block in blocks:
            calls = _calls(block, offered)
            if calls is None:
                return None
            found.extend(calls)
        return found or None
    return _calls(text, offered)


def leading_call(content: str, offered: Collection[str]) -> tuple[str, dict[str, Any]] | None:
    """The call of a tool in ``offered`` that ``content`` opens with as a bare JSON object,
    whatever follows it (a small model restating its call before going on); else None."""
    text = content.lstrip()
    if not text.startswith("{"):
        return None
    try:
        value, _ = json.JSONDecoder(strict=False).raw_decode(text)
    except (ValueError, RecursionError):
        return None
    return _call(value, offered)


def _tagged_blocks(text: str) -> list[str] | None:
    """The bodies of consecutive ``<tool_call>`` blocks making up all of ``text``."""
    blocks, at = [], 0
    for match in _TAGGED.finditer(text):
        if match.start() != at:
            return None
        blocks.append(match.group("body"))
        at = match.end()
    return blocks if blocks and at == len(text) else None


def _calls(text: str, offered: Collection[str]) -> list[tuple[str, dict[str, Any]]] | None:
    """``text`` as JSON: one call object, a non-empty list of them, or call objects one after
    another (one per line, as small models repeat a call); else None."""
    text = text.strip()
    if not text.startswith(("{", "[")):
        return None
    items = _values(text)
    if items is None:
        return None
    if len(items) == 1 and isinstance(items[0], list):
        items = items[0]
    calls = [_call(item, offered) for item in items]
    if not calls or any(call is None for call in calls):
        return None
    return [call for call in calls if call is not None]


def _values(text: str) -> list[Any] | None:
    """The JSON values ``text`` holds one after another, separated by white space only."""
    decoder, values, at = json.JSONDecoder(strict=False), [], 0
    try:
        while at < len(text):
            value, end = decoder.raw_decode(text, at)
            values.append(value)
            at = len(text) - len(text[end:].lstrip())
    except (ValueError, RecursionError):
        return None
    return values


def _call(item: Any, offered: Collection[str]) -> tuple[str, dict[str, Any]] | None:
    """One ``{"name": <offered>, "arguments": {…}}`` object as ``(name, arguments)``."""
    if not isinstance(item, dict) or set(item) != {"name", "arguments"}:
        return None
    name, arguments = item["name"], item["arguments"]
    if not isinstance(name, str) or name not in offered or not isinstance(arguments, dict):
        return None
    return name, arguments


def could_be_call(content: str) -> bool:
    """Whether ``content``, still arriving, may yet turn out to be calls ``parse`` reads:
    nothing but white space so far, or an opening ``{"``, ``[{``, a fence or a tag."""
    text = content.lstrip()[:PREFIX_CHARS]
    if FENCE.startswith(text):
        return True
    if text.startswith(FENCE):
        language, newline, rest = text[len(FENCE) :].partition("\n")
        if not "json".startswith(language.strip()):
            return False
        return not newline or could_be_call(rest)
    if OPEN_TAG.startswith(text):
        return True
    if text.startswith(OPEN_TAG):
        return could_be_call(text[len(OPEN_TAG) :])
    if text.startswith("["):
        rest = text[1:].lstrip()
        return not rest or (rest.startswith("{") and could_be_call(rest))
    if text.startswith("{"):
        rest = text[1:].lstrip()
        return not rest or rest.startswith('"')
    return False
