"""The public signatures of ``SubagentService``, pinned to docs/subagents.md "Service signatures".

The doc's lines are copied here verbatim; each is compared with ``inspect.signature`` of
the method: parameter names, which are keyword-only, defaults, the return annotation, and
whether the method is ``async`` (the doc: "All ``async`` except ``interrupt``, ...").
The public methods the doc lists apart are pinned to the service's module docstring, so
that a new public method, or a changed one, is a decision made in the open.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

import attrs
import pytest

from host.subagents import service as service_module
from host.subagents.service import SubagentService
from host.subagents.types import ContinuableStart

DOCUMENTED_SIGNATURES = [  # docs/subagents.md "Service signatures", in its order
    "start(provider, request, *, parent, signal=None) -> SubagentRun",
    "start_continuable(provider, request, *, parent, label, signal=None) -> ContinuableStart(child_id, message_id)",
    "followup(parent, child_id, content, *, source, signal=None) -> MessageId",
    "interrupt(target_id, *, caller) -> None",
    "list_children(parent_id, *, signal=None) -> list[SubagentListEntry]",
    "list_descendants(root_id, *, signal=None) -> list[SubagentListEntry]",
    "report_from(child, content, *, delivery, signal=None) -> MessageId",
    "register_continuable_setup(contribution) -> Disposer",
    "register_provider(provider) -> Disposer",
]
SYNC = {"interrupt", "register_continuable_setup", "register_provider"}  # "all async except"

BEYOND_THE_LIST = {  # public, documented in the module docstring, not in the doc's list
    "may_delegate": "may_delegate(provider, header) -> bool",
    "drain_descendants": "drain_descendants(parent) -> None",
    "aclose": "aclose() -> None",
    "cancel_waiting": "cancel_waiting(target_id, *, caller) -> None",
    "resume_waiting": "resume_waiting(root) -> None",
}
INTERNAL = {"manager", "index", "close"}  # public names the host itself uses, not a contract

LINE = re.compile(r"(?P<name>\w+)\((?P<params>[^)]*)\) -> (?P<returns>.+)")


def shape(name: str, method: Any) -> str:
    """``name(a, b, *, c, d=None) -> R``, the way docs/subagents.md writes a signature."""
    parts: list[str] = []
    star = False
    for param in list(inspect.signature(method).parameters.values())[1:]:  # without self
        if param.kind is param.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        assert param.kind in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY), param
        default = "" if param.default is param.empty else f"={param.default!r}"
        parts.append(f"{param.name}{default}")
    returns = inspect.signature(method).return_annotation
    return f"{name}({', '.join(parts)}) -> {returns}"


def design_line(line: str) -> tuple[str, str]:
    """(method name, the line with a ``Record(field, …)`` return reduced to ``Record``)."""
    match = LINE.fullmatch(line)
    assert match, line
    returns = re.sub(r"\(.*\)$", "", match["returns"])
    return match["name"], f"{match['name']}({match['params']}) -> {returns}"


@pytest.mark.parametrize("line", DOCUMENTED_SIGNATURES)
def test_the_signature_is_the_designs(line: str) -> None:
    name, expected = design_line(line)
    method = getattr(SubagentService, name)
    assert shape(name, method) == expected
    assert inspect.iscoroutinefunction(method) is (name not in SYNC)


def test_continuable_start_carries_child_id_then_message_id() -> None:
    assert [field.name for field in attrs.fields(ContinuableStart)] == ["child_id", "message_id"]


@pytest.mark.parametrize("name", sorted(BEYOND_THE_LIST))
def test_the_other_public_methods_are_the_module_docstrings(name: str) -> None:
    line = BEYOND_THE_LIST[name]
    assert line in (service_module.__doc__ or "")
    assert shape(name, getattr(SubagentService, name)) == line


def test_no_public_method_goes_unpinned() -> None:
    public = {
        name
        for name, value in vars(SubagentService).items()
        if not name.startswith("_") and callable(value)
    }
    named = {design_line(line)[0] for line in DOCUMENTED_SIGNATURES}
    assert public == named | set(BEYOND_THE_LIST) | INTERNAL
