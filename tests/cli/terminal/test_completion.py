"""Tab completion at the terminal client's prompt (``SlashCompleter``) over the commands of a
real host: command names, then a command's first argument, nothing for a message."""

from __future__ import annotations

from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from host.cli.slash import SlashCommands
from host.cli.terminal.completion import Candidates, SlashCompleter
from host.plugins.reload import ReloadOutcome
from host.testing import HostHarness

AGENTS = [("sub_aaa111", "research changes"), ("sub_aab222", "tests"), ("sub_bbb333", "running")]


def reload(name: str) -> ReloadOutcome:
    return ReloadOutcome(name, True, 0.01, "active")


def completer(harness: HostHarness, *, dev: bool = False) -> SlashCompleter:
    commands = SlashCommands(harness.host, lambda: None, reload=reload if dev else None)
    arguments: dict[str, Candidates] = {
        "agent": lambda: AGENTS,
        "plugin": lambda: [(row["name"], row["state"]) for row in harness.host.plugin_rows()],
        "model": lambda: [("scripted", "model")],
    }
    return SlashCompleter(commands, arguments)


def complete(made: SlashCompleter, text: str) -> list[tuple[str, int, str]]:
    """Each completion's text, start position and note."""
    found = made.get_completions(Document(text), CompleteEvent(completion_requested=True))
    return [(c.text, c.start_position, c.display_meta_text) for c in found]


async def test_a_command_name_completes(harness: HostHarness) -> None:
    made = completer(harness)
    assert complete(made, "/sh") == [
        ("/show", -3, "a subagent's transcript (followed live while it runs)")
    ]
    every = [f"/{command.name}" for command in made.commands.commands]  # in /help order
    assert [text for text, _, _ in complete(made, "/")] == every
    assert "/reload" not in every
    assert [text for text, _, _ in complete(made, "/s")] == ["/show", "/send"]
    assert complete(made, "/nothing") == []


async def test_reload_is_offered_only_with_a_reload(harness: HostHarness) -> None:
    assert complete(completer(harness), "/re") == []
    assert complete(completer(harness, dev=True), "/re") == [("/reload", -3, "reload a plugin now")]
    assert complete(completer(harness, dev=True), "/reload sub") == [("subagents", -3, "active")]
    assert complete(completer(harness), "/reload sub") == []


async def test_an_agent_argument_completes_by_id_or_label(harness: HostHarness) -> None:
    made = completer(harness)
    assert complete(made, "/show ") == [(value, 0, note) for value, note in AGENTS]
    assert complete(made, "/show sub_aa") == [
        ("sub_aaa111", -6, "research changes"),
        ("sub_aab222", -6, "tests"),
    ]
    assert complete(made, "/send tes") == [("sub_aab222", -3, "tests")]
    assert complete(made, "/interrupt sub_b") == [("sub_bbb333", -5, "running")]
    assert complete(made, "/model scr") == [("scripted", -3, "model")]


async def test_candidates_are_asked_on_each_completion(harness: HostHarness) -> None:
    agents: list[tuple[str, str]] = []
    commands = SlashCommands(harness.host, lambda: None)
    made = SlashCompleter(commands, {"agent": lambda: agents})
    assert complete(made, "/show ") == []
    agents.append(("sub_new", "fresh"))  # a subagent that just started
    assert complete(made, "/show ") == [("sub_new", 0, "fresh")]
    assert complete(made, "/model ") == []  # no source for models given


async def test_a_message_and_later_arguments_get_nothing(harness: HostHarness) -> None:
    made = completer(harness)
    assert complete(made, "sh") == []
    assert complete(made, "tell /show me") == []
    assert complete(made, " /show") == []
    assert complete(made, "/send sub_aaa111 ") == []  # the text is not completed
    assert complete(made, "/send sub_aaa111 res") == []
    assert complete(made, "/send research ch") == []  # not "research changes": two arguments
    assert complete(made, "/agents ") == []  # takes no argument
    assert complete(made, "/unknown sub") == []
