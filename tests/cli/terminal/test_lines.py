"""What the terminal client prints for the root's feed events: streamed answer lines
(``StreamLines``) and one compact line per tool call, result, notice or failed turn
(``event_lines``); the events are those the feed makes of real event bodies."""

from __future__ import annotations

import json

from rich.text import Text

from host.cli.terminal.lines import StreamLines, event_lines
from host.cli.transcript import ARGUMENT_CHARS
from host.clients.events import (
    AgentMessageDelta,
    ClientEvent,
    ItemCompleted,
    ToolCallProgress,
    TurnStarted,
)
from host.clients.feed import translate
from host.clients.items import Item
from host.sessions.model import (
    Event,
    EventBody,
    InboxAccepted,
    MessageEvent,
    ToolCall,
    TurnEnd,
    TurnStart,
)
from host.subagents.types import MessageSource

NAMES = {"sub_1": "research", "root": "you"}


def lines(body: EventBody) -> list[Text]:
    return [line for e in translate("root", [Event(3, body)]) for line in event_lines(e, NAMES)]


def delta(text: str) -> ClientEvent:
    return AgentMessageDelta("root", None, "stream_1", text)


def answer(text: str, *, streamed: bool) -> ClientEvent:
    """The ``item/completed`` of the model's text (naming its stream when it streamed)."""
    item = Item("agentMessage", "msg_1", 3, "root", text=text)
    return ItemCompleted("root", "root", 3, None, item, "stream_1" if streamed else None)


def styles(text: Text) -> dict[str, str]:
    """Each styled span's text and its style."""
    return {text.plain[span.start : span.end]: str(span.style) for span in text.spans}


# -- StreamLines ---------------------------------------------------------------------------


def test_deltas_split_into_finished_lines_and_the_partial_one() -> None:
    stream = StreamLines()
    assert stream.feed(delta("Hello")) == []
    assert stream.partial == "Hello"
    assert stream.feed(delta(" world\nsecond")) == ["Hello world"]
    assert stream.partial == "second"
    assert stream.feed(delta(" line\n\nfourth\nfif")) == ["second line", "", "fourth"]
    assert stream.partial == "fif"
    assert stream.feed(TurnStarted("root", "root", 2, "turn_1")) == []
    assert stream.partial == "fif"


def progress(message: str) -> ClientEvent:
    return ToolCallProgress("root", None, "call_1", message, 1, 3)


def test_the_latest_tool_progress_is_kept_until_a_result_or_an_answer() -> None:
    stream = StreamLines()
    assert stream.feed(progress("step 1 of 3")) == []
    assert stream.feed(progress("step 2 of 3")) == []
    assert stream.progress == "step 2 of 3"
    assert stream.partial == ""
    result = Item("toolResult", "call_1", 4, "root", text="ok")
    stream.feed(ItemCompleted("root", "root", 4, None, result))
    assert stream.progress == ""
    stream.feed(progress("again"))
    stream.feed(answer("done", streamed=False))
    assert stream.progress == ""


def test_a_response_ends_the_streamed_text_without_repeating_it() -> None:
    stream = StreamLines()
    stream.feed(delta("one\ntw"))
    assert stream.feed(answer("one\ntwo", streamed=True)) == ["tw"]
    assert stream.partial == ""
    # the next response, not streamed, is taken whole
    assert stream.feed(answer("three\nfour", streamed=False)) == ["three", "four"]
    assert stream.partial == ""


def test_a_response_that_was_not_streamed_is_taken_whole() -> None:
    stream = StreamLines()
    assert stream.feed(answer("first\nsecond\n", streamed=False)) == ["first", "second"]
    assert stream.partial == ""
    assert stream.feed(answer("", streamed=False)) == []


def test_flush_ends_the_line_still_arriving() -> None:
    stream = StreamLines()
    stream.feed(delta("cut sho"))
    assert stream.flush() == ["cut sho"]
    assert stream.partial == ""
    assert stream.flush() == []
    stream.feed(delta("   "))
    assert stream.flush() == []  # white space alone is no line
    assert stream.partial == ""


def test_after_a_stream_cut_short_an_unstreamed_response_is_still_shown() -> None:
    stream = StreamLines()
    stream.feed(delta("interrupted mid"))
    assert stream.flush() == ["interrupted mid"]  # the turn ended without a response
    # the next call's model does not stream (``/model`` switched it): its text is all there is
    assert stream.feed(answer("the whole answer", streamed=False)) == ["the whole answer"]


# -- event_lines ---------------------------------------------------------------------------


def test_the_line_arriving_is_cut_into_rows_and_its_end_kept_in_view() -> None:
    stream = StreamLines()
    stream.feed(delta("short"))
    assert stream.arriving(10, 3) == "short"
    stream.feed(delta(" and then much longer"))  # "short and then much longer"
    assert stream.arriving(10, 3) == "short and \nthen much \nlonger"
    assert stream.arriving(10, 2) == "…hen much \nlonger"
    stream.feed(delta("：全角"))  # wide characters take two cells each
    assert stream.arriving(10, 2) == "…onger：全\n角"
    assert stream.arriving(1, 1) == "…"


def test_a_tool_call_is_its_name_and_cut_arguments() -> None:
    long = {"path": "x" * 200}
    call = ToolCall("call_1", "read_file", long)
    (line,) = lines(MessageEvent(role="assistant", content="", tool_calls=(call,)))
    arguments = json.dumps(long)
    assert line.plain == f"⏺ read_file {arguments[: ARGUMENT_CHARS - 1]}…"
    assert styles(line)["read_file"] == "bold yellow"
    assert styles(line)[f"{arguments[: ARGUMENT_CHARS - 1]}…"] == "dim"


def test_each_call_of_a_batch_is_a_line_and_assistant_text_is_none() -> None:
    calls = (ToolCall("c1", "ls", {}), ToolCall("c2", "echo", {"text": "héllo"}))
    shown = lines(MessageEvent(role="assistant", content="I'll look.", tool_calls=calls))
    assert [line.plain for line in shown] == ["⏺ ls {}", '⏺ echo {"text": "héllo"}']
    assert lines(MessageEvent(role="assistant", content="just text")) == []


def test_a_tool_result_is_its_first_line() -> None:
    result = MessageEvent(role="tool", content="\n  first line\nsecond line\n", tool_call_id="c1")
    (line,) = lines(result)
    assert line.plain == "  ⎿ first line"
    assert styles(line)["  ⎿ "] == "dim"
    (long,) = lines(MessageEvent(role="tool", content="y" * 500, tool_call_id="c1"))
    assert long.plain == "  ⎿ " + "y" * 159 + "…"
    (empty,) = lines(MessageEvent(role="tool", content="", tool_call_id="c1"))
    assert empty.plain == "  ⎿ "


def test_an_error_result_is_marked() -> None:
    failed = MessageEvent(role="tool", content="no such file\ntrace", is_error=True)
    (line,) = lines(failed)
    assert line.plain == "  ✗ no such file"
    assert styles(line) == {"  ✗ ": "bold red", "no such file": "red"}


def test_reports_and_settlement_notices_name_the_sender() -> None:
    report = MessageSource("subagent-report", "sub_1").as_dict()
    (line,) = lines(InboxAccepted("m1", "followup", "halfway\nthere", report))
    assert line.plain == "↳ report from research: halfway ⏎ there"
    assert styles(line)["↳ report from research: "] == "magenta"
    settled = MessageSource("subagent-settled", "sub_2").as_dict()
    (line,) = lines(InboxAccepted("m2", "followup", "done", settled))
    assert line.plain == "◆ settled: sub_2: done"  # an unknown sender is named by its id


def test_other_inbox_messages_show_nothing() -> None:
    coordinator = MessageSource("coordinator", "root").as_dict()
    assert lines(InboxAccepted("m", "followup", "do it", coordinator)) == []
    assert lines(InboxAccepted("m", "steer", "typed by the person")) == []


def test_a_turn_that_did_not_complete_says_how_it_ended() -> None:
    (line,) = lines(TurnEnd("t1", "error", error="model unavailable"))
    assert line.plain == "⏹ turn ended (error): model unavailable"
    assert line.style == "bold red"
    (line,) = lines(TurnEnd("t1", "interrupted"))
    assert line.plain == "⏹ turn ended (interrupted)"
    assert lines(TurnEnd("t1", "completed")) == []


def test_other_events_show_nothing() -> None:
    assert lines(TurnStart("t1")) == []
    assert lines(MessageEvent(role="user", content="hi")) == []
