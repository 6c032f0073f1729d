"""Tab completion at the terminal client's prompt: command names, then their first argument
(agent ids with their labels, plugin names, model names)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from host.cli.slash import SlashCommands

Candidates = Callable[[], Iterable[tuple[str, str]]]
"""Values an argument can take, each with a short note shown beside it."""


class SlashCompleter(Completer):
    """Completes ``/com`` to a command and ``/show re`` to an agent; messages get nothing.

    ``arguments`` maps what a command's argument names (``Command.completes``) to where its
    candidates come from, asked on each completion (so new agents complete at once).
    """

    def __init__(self, commands: SlashCommands, arguments: Mapping[str, Candidates]) -> None:
        self.commands = commands
        self.arguments = arguments

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterator[Completion]:
        """The completions for the text before the cursor."""
        text = document.text_before_cursor
        if not text.startswith("/"):
            return
        name, space, rest = text[1:].partition(" ")
        if not space:
            for command in self.commands.commands:
                if command.name.startswith(name):
                    yield Completion(
                        "/" + command.name,
                        start_position=-len(text),
                        display_meta=command.summary,
                    )
            return
        found = self.commands.find(name)
        if found is None or found.completes is None or " " in rest:
            return
        source = self.arguments.get(found.completes)
        for value, note in source() if source is not None else ():
            if value.startswith(rest) or note.startswith(rest):
                yield Completion(value, start_position=-len(rest), display_meta=note)
