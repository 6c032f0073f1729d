"""A session log as readable lines: who said what, tool calls and results, approval requests
and questions with their decisions, turn ends."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

from host.cli.style import Style
from host.sessions.model import (
    ApprovalDecided,
    ApprovalRequested,
    Compaction,
    Event,
    InboxAccepted,
    MessageEvent,
    SubagentDescriptorEvent,
    TurnEnd,
)

if TYPE_CHECKING:
    from host.clients.items import Item

DECISIONS = {
    "approved": "approved",
    "approved_for_session": "approved for the session",
    "denied": "denied",
    "answered": "answered",
    "cancelled": "cancelled",
}
"""How ``render_events`` words each decision: ``[approved: shell]``, ``[denied: shell: not
now]``, ``[answered: blue]``."""

_SOURCE_NAMES = {
    "coordinator": "from parent",
    "subagent-start": "task from",
    "subagent-report": "report from",
    "subagent-settled": "settled:",
}


def short(text: str, limit: int = 400) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    flat = " ⏎ ".join(part for part in text.splitlines() if part.strip()) or text
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


ARGUMENT_CHARS = 80
"""How much of a tool call's arguments a one-line view shows."""
RESULT_CHARS = 160
"""How much of a tool result's first line a one-line view shows."""


def first_line(content: str) -> str:
    """The first line of a tool result, cut to ``RESULT_CHARS``."""
    return short((content.strip().splitlines() or [""])[0], RESULT_CHARS)


def tool_parts(item: Item) -> tuple[tuple[str, str], ...] | None:
    """The one line a client item shows as, in styled parts ``(text, rich style)``:
    ``⏺ name {…}`` for a tool call, ``  ⎿ first line`` (``  ✗`` for an error) for a tool
    result; None for other items. The plain client prints the texts, the terminal client the
    styled parts: one line, written once."""
    if item.type == "toolCall":
        arguments = short(json.dumps(item.arguments, ensure_ascii=False), ARGUMENT_CHARS)
        return ("⏺ ", "yellow"), (item.name or "", "bold yellow"), (" ", ""), (arguments, "dim")
    if item.type == "toolResult":
        first = first_line(item.text or "")
        if item.is_error:
            return ("  ✗ ", "bold red"), (first, "red")
        return ("  ⎿ ", "dim"), (first, "")
    return None


PERSONA_HEAD_CHARS = 30
"""How much of a persona's first line a descriptor's view shows."""


def persona_summary(persona: str) -> str:
    """``"You are a general-purpose …" (412 chars)``: the first line, cut at a word within
    ``PERSONA_HEAD_CHARS``, and the persona's whole length."""
    line = (persona.strip().splitlines() or [""])[0]
    head = line
    if len(line) > PERSONA_HEAD_CHARS:
        head = line[: PERSONA_HEAD_CHARS + 1].rsplit(" ", 1)[0] or line[:PERSONA_HEAD_CHARS]
    if head != persona.strip():
        head += " …"
    return f"{json.dumps(head, ensure_ascii=False)} ({len(persona)} chars)"


def descriptor_text(descriptor: Mapping[str, object]) -> str:
    """A child's descriptor on one line: its fields as JSON, the persona summarised last."""
    fields = {key: value for key, value in descriptor.items() if key != "persona"}
    text = json.dumps(fields)
    persona = descriptor.get("persona")
    return f"{text}; persona: {persona_summary(persona)}" if isinstance(persona, str) else text


def source_label(source: dict[str, object] | None, names: Mapping[str, str]) -> str:
    """Where a user message came from, e.g. ``report from researcher``; empty for a person."""
    if not source:
        return ""
    kind = str(source.get("kind", ""))
    sender = str(source.get("sender_session_id") or "")
    name = _SOURCE_NAMES.get(kind, kind)
    return f"{name} {names.get(sender, sender)}" if sender else name


def render_message(message: MessageEvent, style: Style, names: Mapping[str, str]) -> Iterator[str]:
    """Lines for one message; ``names`` maps session ids to display names."""
    if message.role == "user":
        yield _user_line(source_label(message.source, names), message.content, style)
        return
    from host.clients.items import items_of  # with cattrs: not for listing plugins

    for item in items_of(Event(0, message), ""):
        yield from render_item(item, style, names)


def render_item(item: Item, style: Style, names: Mapping[str, str]) -> Iterator[str]:
    """Lines for one transcript item (``host.clients.items``), as ``render_message`` has
    the message it comes from."""
    if item.type == "agentMessage":
        yield f"{style('assistant', 'bold', 'green')}: {short(item.text or '')}"
    elif item.type == "toolCall":
        arguments = json.dumps(item.arguments, ensure_ascii=False)
        yield f"  {style('→', 'yellow')} {style(item.name or '', 'yellow')} {short(arguments, 200)}"
    elif item.type == "toolResult":
        mark = style("✗", "red") if item.is_error else style("←", "cyan")
        yield f"  {mark} {short(item.text or '')}"
    else:
        from host.clients.items import NOTICES  # loaded already: the item comes from it

        sender = item.subagent_id  # a notice shows as its source kind, a parent's message not
        kind = next((k for k, notice in NOTICES.items() if notice == item.type), "coordinator")
        source: dict[str, object] | None = (
            {"kind": kind, "sender_session_id": sender} if sender else None
        )
        yield _user_line(source_label(source, names), item.text or "", style)


def _user_line(origin: str, content: str, style: Style) -> str:
    who = f"user ({origin})" if origin else "user"
    return f"{style(who, 'bold', 'blue')}: {short(content)}"


def render_events(
    events: Iterable[Event], style: Style | None = None, names: Mapping[str, str] | None = None
) -> list[str]:
    """Readable lines for a session's events (inbox bookkeeping left out)."""
    style = style or Style(False)
    names = names or {}
    lines: list[str] = []
    tools: dict[str, str] = {}
    for event in events:
        body = event.body
        if isinstance(body, MessageEvent):
            lines.extend(render_message(body, style, names))
        elif isinstance(body, TurnEnd):
            detail = f": {body.error}" if body.error else ""
            lines.append(style(f"  [turn ended: {body.stop_reason}{detail}]", "dim"))
        elif isinstance(body, Compaction):
            lines.append(style(f"  [compacted: {short(body.summary)}]", "dim"))
        elif isinstance(body, SubagentDescriptorEvent):
            text = descriptor_text(body.descriptor)
            lines.append(style(f"  [subagent descriptor: {text}]", "dim"))
        elif isinstance(body, InboxAccepted) and body.delivery == "inject":
            lines.append(style(f"  [quiet message queued: {short(body.content, 80)}]", "dim"))
        elif isinstance(body, (ApprovalRequested, ApprovalDecided)):
            lines.append(style(approval_line(body, tools), "magenta"))
            if isinstance(body, ApprovalRequested):
                tools[body.request_id] = body.tool
    return lines


def approval_line(body: ApprovalRequested | ApprovalDecided, tools: Mapping[str, str]) -> str:
    """``  [asked the user: <who> wants to run <tool> {…}]`` (or ``… asks: <question>``) for a
    request; for a decision ``  [<decision>: <tool>: <reason>]`` (``DECISIONS``), a question's
    ``  [answered: <answer>]``. ``tools``: the tool of each request id seen before."""
    from host.approvals.requests import ApprovalRequest

    if isinstance(body, ApprovalRequested):
        request = ApprovalRequest.from_event(body, "")
        return f"  [asked the user: {short(request.line())}]"
    said = DECISIONS.get(body.decision, body.decision)
    if body.decision == "answered":
        return f"  [{said}: {short(body.answer or '')}]"
    parts = [said, tools.get(body.request_id, body.request_id), body.reason]
    return "  [" + ": ".join(short(part) for part in parts if part) + "]"
