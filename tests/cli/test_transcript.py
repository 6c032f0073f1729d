"""``sessions show`` and the demo: a child's descriptor on one line, its persona summarised."""

from __future__ import annotations

from host.cli.transcript import render_events
from host.profiles.sources import GENERAL_PURPOSE
from host.sessions.model import Event, SubagentDescriptorEvent


def descriptor_line(descriptor: dict) -> str:
    (line,) = render_events([Event(1, SubagentDescriptorEvent(descriptor))])
    return line


def test_a_persona_is_its_first_line_and_its_length_not_the_whole_text() -> None:
    persona = GENERAL_PURPOSE.persona_for(True, True)
    assert persona is not None
    line = descriptor_line({"version": 2, "mode": "continuable", "persona": persona})
    assert line == (
        '  [subagent descriptor: {"version": 2, "mode": "continuable"}; '
        f'persona: "You are a general-purpose …" ({len(persona)} chars)]'
    )


def test_a_short_persona_is_shown_whole_and_only_its_first_line_of_several() -> None:
    assert descriptor_line({"persona": "Be brief."}) == (
        '  [subagent descriptor: {}; persona: "Be brief." (9 chars)]'
    )
    assert descriptor_line({"persona": "Line one.\nLine two."}) == (
        '  [subagent descriptor: {}; persona: "Line one. …" (19 chars)]'
    )


def test_a_descriptor_without_a_persona_is_its_json() -> None:
    assert descriptor_line({"version": 2, "mode": "one-shot"}) == (
        '  [subagent descriptor: {"version": 2, "mode": "one-shot"}]'
    )
