"""``run``/``chat --script FILE``: the scripted model's turns, read from a JSON file.

The file is a list of entries for the root agent (label ``user``), or an object mapping agent
labels to such lists (children go by their labels). An entry is a string (a final answer) or
an object ``{"text": str?, "tool_calls": [{"name": str, "arguments": object?}]?}`` with at
least one of the two keys. A file that cannot be used is one ``ScriptError`` line naming the
place, e.g. ``script.json: entry 3: tool_calls[0].name: must be a non-empty string``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from host.agents.models import ModelRegistry, ModelResponse
from host.agents.scripted import ScriptedModel, calls, say, tool_call
from host.clients.commands import ROOT_LABEL
from host.errors import HostError
from host.sessions.model import ToolCall

ENTRY_KEYS = ("text", "tool_calls")
CALL_KEYS = ("name", "arguments")


class ScriptError(HostError):
    """A script file that cannot be used (code ``BAD_SCRIPT``); the message names the place."""

    def __init__(self, message: str) -> None:
        super().__init__("BAD_SCRIPT", message)


class _Problem(Exception):
    """A shape error at a place inside the file; ``load`` adds the file name."""


ScriptFile = dict[str, list[ModelResponse]]
"""Agent label → the responses queued for it, in order."""


def load(path: Path) -> ScriptFile:
    """The script in ``path``; a ``ScriptError`` when it is missing, not JSON or misshapen."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ScriptError(f"{path}: cannot read it: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise ScriptError(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as error:
        where = f"line {error.lineno} column {error.colno}"
        raise ScriptError(f"{path}: not JSON: {error.msg} ({where})") from None
    try:
        return parse(data)
    except _Problem as problem:
        raise ScriptError(f"{path}: {problem}") from None


def install(script: ScriptFile, models: ModelRegistry) -> None:
    """Queue each label's responses on the registry's ``scripted`` model."""
    model = _scripted(models)
    for label, responses in script.items():
        model.script(label, *responses)


def unused(models: ModelRegistry) -> str | None:
    """Which queued entries no request took (``label 'user': 2 left``), or None."""
    try:
        _scripted(models).assert_consumed()
    except AssertionError as left:
        return str(left)
    return None


def _scripted(models: ModelRegistry) -> ScriptedModel:
    model = models.resolve("scripted")
    if not isinstance(model, ScriptedModel):
        raise ScriptError(f'--script needs the scripted model, and "scripted" is {model!r}')
    return model


def parse(data: Any) -> ScriptFile:
    """Responses per label from decoded JSON; raises ``_Problem`` naming the first bad place."""
    if isinstance(data, list):
        return {ROOT_LABEL: _entries(data, "")}
    if not isinstance(data, dict):
        raise _Problem("must be a list of entries or an object mapping agent labels to lists")
    script: ScriptFile = {}
    for label, entries in data.items():
        if not label:
            raise _Problem("agent labels must be non-empty")
        if not isinstance(entries, list):
            raise _Problem(f"{label}: must be a list of entries")
        script[label] = _entries(entries, f"{label}: ")
    return script


def _entries(entries: list[Any], where: str) -> list[ModelResponse]:
    responses = []
    for number, entry in enumerate(entries, 1):
        try:
            responses.append(_entry(entry))
        except _Problem as problem:
            raise _Problem(f"{where}entry {number}: {problem}") from None
    return responses


def _entry(entry: Any) -> ModelResponse:
    if isinstance(entry, str):
        return say(entry)
    if not isinstance(entry, dict):
        raise _Problem("must be a string or an object")
    _known_keys(entry, ENTRY_KEYS, "")
    if not entry:
        raise _Problem("needs text or tool_calls")
    text = entry.get("text", "")
    if not isinstance(text, str):
        raise _Problem("text: must be a string")
    if "tool_calls" not in entry:
        return say(text)
    tool_calls = entry["tool_calls"]
    if not isinstance(tool_calls, list) or not tool_calls:
        raise _Problem("tool_calls: must be a non-empty list")
    return calls(*(_call(c, f"tool_calls[{i}]") for i, c in enumerate(tool_calls)), text=text)


def _call(call: Any, where: str) -> ToolCall:
    if not isinstance(call, dict):
        raise _Problem(f"{where}: must be an object")
    _known_keys(call, CALL_KEYS, f"{where}.")
    name = call.get("name")
    if not isinstance(name, str) or not name.strip():
        raise _Problem(f"{where}.name: must be a non-empty string")
    arguments = call.get("arguments", {})
    if not isinstance(arguments, dict):
        raise _Problem(f"{where}.arguments: must be an object")
    return tool_call(name, **arguments)


def _known_keys(value: dict[str, Any], known: tuple[str, ...], where: str) -> None:
    unknown = [key for key in value if key not in known]
    if unknown:
        raise _Problem(f"{where}{unknown[0]}: unknown key (expected {' or '.join(known)})")
