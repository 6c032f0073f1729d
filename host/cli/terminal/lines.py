"""What the terminal client prints for the root's feed events (``host.clients.feed``):
compact, styled, one line each.

A tool call is ``⏺ name {"arg": …}`` (arguments cut short), its result ``  ⎿ first line`` or,
for an error, ``  ✗ first line``; a report or settlement notice from a subagent is one line
naming it; a turn that did not complete says how it ended. The root's answer text is not
here: it arrives streamed (``StreamLines``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from rich.cells import cell_len, chop_cells
from rich.text import Text

from host.cli.transcript import short, tool_parts
from host.clients.events import (
    AgentMessageDelta,
    ClientEvent,
    ItemCompleted,
    ToolCallProgress,
    TurnCompleted,
)

NOTICE_CHARS = 200
NOTICE_MARKS = {"subagentReport": ("↳", "report from"), "subagentSettled": ("◆", "settled:")}


def event_lines(event: ClientEvent, names: Mapping[str, str]) -> Iterator[Text]:
    """The lines one of the root's feed events shows as (none for most): a completed item
    but the streamed text, and a turn that did not complete."""
    if isinstance(event, TurnCompleted):
        if event.stop_reason != "completed":
            detail = f": {event.error}" if event.error else ""
            yield Text(f"⏹ turn ended ({event.stop_reason}){detail}", style="bold red")
        return
    if not isinstance(event, ItemCompleted):
        return
    item = event.item
    parts = tool_parts(item)
    if parts is not None:
        yield Text.assemble(*parts)
    elif item.type in NOTICE_MARKS:
        mark, said = NOTICE_MARKS[item.type]
        sender = item.subagent_id or ""
        who = f"{said} {names.get(sender, sender)}" if sender else said
        text = short(item.text or "", NOTICE_CHARS)
        yield Text.assemble((f"{mark} {who}: ", "magenta"), text)


class StreamLines:
    """Splits the root's streamed text into finished lines and the line still arriving.

    ``feed`` returns the lines a feed event finished; ``partial`` is the rest, shown above
    the prompt until its line ends (``arriving``). An answer none of whose text was streamed
    (a model that does not stream: its ``item/completed`` names no stream) is taken whole.
    ``progress`` is the latest progress message of the root's tool calls, shown under their
    lines until a call's result or an answer is stored, or the turn ends.
    """

    def __init__(self) -> None:
        self.partial = ""
        self.progress = ""

    def feed(self, event: ClientEvent) -> list[str]:
        """The lines ``event`` completes."""
        if isinstance(event, AgentMessageDelta):
            return self._add(event.delta)
        if isinstance(event, ToolCallProgress):
            self.progress = event.message
        elif isinstance(event, ItemCompleted) and event.item.type == "toolResult":
            self.progress = ""
        elif isinstance(event, ItemCompleted) and event.item.type == "agentMessage":
            self.progress = ""
            done = [] if event.stream_id is not None else self._add(event.item.text or "")
            return done + self.flush()
        elif isinstance(event, TurnCompleted):
            self.progress = ""
            return self.flush()
        return []

    def arriving(self, width: int, rows: int) -> str:
        """``partial`` as shown above the prompt, which does not wrap it: cut into rows of
        ``width`` cells, the last ``rows`` of them, with ``…`` first when earlier ones are
        left out (the whole line is printed once it ends)."""
        chopped = chop_cells(self.partial, max(1, width))
        if len(chopped) <= rows:
            return "\n".join(chopped)
        kept = chopped[-max(1, rows) :]
        head = kept[0]
        while head and cell_len(head) >= width:  # room for the "…"
            head = head[1:]
        kept[0] = "…" + head
        return "\n".join(kept)

    def flush(self) -> list[str]:
        """The line still arriving, ended now (a stream cut short); [] when there is none."""
        rest, self.partial = self.partial, ""
        return [rest] if rest.strip() else []

    def _add(self, text: str) -> list[str]:
        *done, self.partial = (self.partial + text).split("\n")
        return done
