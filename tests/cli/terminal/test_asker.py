"""``PromptAsker``: approval requests and ``ask_user`` questions asked at the terminal
client's prompt, one at a time, answered by the lines the person types."""

from __future__ import annotations

import asyncio
from typing import Any

from rich.text import Text

from host.approvals.requests import Answer, ApprovalRequest
from host.cli.approve import CHOICES, END_OF_INPUT, SAID_NO
from host.cli.terminal.asker import ANSWER_PROMPT, APPROVE_PROMPT, PromptAsker
from host.sessions.model import ApprovalOrigin


def request(
    request_id: str = "apr_1",
    question: str | None = None,
    choices: tuple[str, ...] | None = None,
    arguments: Any = None,
) -> ApprovalRequest:
    origin = ApprovalOrigin("sub_1", "sub_1", 2, "research changes")
    arguments = {"cmd": "ls"} if arguments is None else arguments
    return ApprovalRequest(
        request_id, "shell", arguments, "call_1", origin, "root", question, choices
    )


RM = request("apr_1")
RM_LINE = 'sub_1 (research changes, depth 2) wants to run shell {"cmd": "ls"}'


class Screen:
    """What the asker printed, and how often it asked for the prompt to be redrawn."""

    def __init__(self) -> None:
        self.said: list[Text] = []
        self.redraws = 0

    def say(self, line: Text) -> None:
        self.said.append(line)

    def changed(self) -> None:
        self.redraws += 1

    @property
    def plain(self) -> list[str]:
        return [line.plain for line in self.said]


def asker() -> tuple[PromptAsker, Screen]:
    screen = Screen()
    return PromptAsker(screen.say, screen.changed), screen


async def settle() -> None:
    """Let every ready task run until none is left to run."""
    for _ in range(10):
        await asyncio.sleep(0)


async def test_a_request_is_printed_with_its_choices_and_the_prompt_changes() -> None:
    made, screen = asker()
    assert made.prompt is None
    assert not made.take("not for a request")
    asked = asyncio.ensure_future(made(RM))
    await settle()
    assert screen.plain == [RM_LINE + CHOICES]
    assert screen.said[0].style == "bold cyan"
    assert made.prompt == APPROVE_PROMPT == "approve> "
    assert screen.redraws == 1
    assert made.take("y")
    assert await asked == Answer.approve()
    assert made.prompt is None
    assert screen.redraws == 2
    assert not made.take("hello")  # a line for the conversation again


async def test_the_replies_mean_what_they_mean_in_plain_mode() -> None:
    for reply, answer in [
        ("yes", Answer.approve()),
        (" A ", Answer.approve_for_session()),
        ("n", Answer.deny(SAID_NO)),
        ("no  not on my machine ", Answer.deny("not on my machine")),
    ]:
        made, _ = asker()
        asked = asyncio.ensure_future(made(RM))
        await settle()
        assert made.take(reply)
        assert await asked == answer, reply


async def test_an_unclear_reply_asks_again() -> None:
    made, screen = asker()
    asked = asyncio.ensure_future(made(RM))
    await settle()
    assert made.take("maybe")
    await settle()
    assert not asked.done()
    assert screen.plain == [RM_LINE + CHOICES, RM_LINE + CHOICES]
    assert made.prompt == APPROVE_PROMPT
    assert made.take("y please")  # "y" with more is not a yes either
    await settle()
    assert not asked.done()
    assert made.take("n reason given")
    assert await asked == Answer.deny("reason given")
    assert len(screen.said) == 3


async def test_a_question_takes_the_line_as_its_answer_and_a_number_picks_a_choice() -> None:
    made, screen = asker()
    pick = request("apr_2", "Which colour?", ("red", "green"))
    asked = asyncio.ensure_future(made(pick))
    await settle()
    assert screen.plain == [
        "sub_1 (research changes, depth 2) asks: Which colour? [1 red / 2 green]"
    ]
    assert made.prompt == ANSWER_PROMPT == "answer> "
    made.take("   ")  # an empty answer asks again
    await settle()
    assert not asked.done() and len(screen.said) == 2
    made.take("2")
    assert await asked == Answer.reply("green")
    free = asyncio.ensure_future(made(request("apr_3", "Why?")))
    await settle()
    made.take(" because ")
    assert await free == Answer.reply("because")


async def test_an_empty_line_is_no_reply_and_asks_again() -> None:
    made, screen = asker()
    asked = asyncio.ensure_future(made(RM))
    await settle()
    assert made.take("")  # Enter alone at the prompt
    await settle()
    assert not asked.done()
    assert screen.plain == [RM_LINE + CHOICES, RM_LINE + CHOICES]
    made.take("y")
    assert await asked == Answer.approve()
    question = asyncio.ensure_future(made(request("apr_2", "Why?")))
    await settle()
    made.take("")
    await settle()
    assert not question.done()
    made.take("because")
    assert await question == Answer.reply("because")


async def test_ctrl_d_denies_the_open_request_and_returns_once_it_is_answered() -> None:
    made, _ = asker()
    asked = asyncio.ensure_future(made(RM))
    await settle()
    await made.end_of_input()
    assert asked.done() and asked.result() == Answer.deny(END_OF_INPUT)
    assert made.prompt is None


async def test_once_stopped_later_requests_stay_open_and_say_nothing() -> None:
    made, screen = asker()
    first = asyncio.ensure_future(made(RM))
    second = asyncio.ensure_future(made(request("apr_2", arguments={"cmd": "rm -rf /"})))
    await settle()
    await made.end_of_input()
    assert await first == Answer.deny(END_OF_INPUT)
    await settle()
    assert not second.done()  # left open: the host records nothing, it is asked on resume
    second.cancel()  # the host closing
    await settle()
    assert screen.plain == [RM_LINE + CHOICES]
    assert made.prompt is None
    assert not made.take("y")


async def test_a_reply_too_long_decides_nothing_and_asks_again() -> None:
    made, screen = asker()
    asked = asyncio.ensure_future(made(RM))
    await settle()
    made.take("n " + "x" * 100_000)
    await settle()
    assert not asked.done()
    assert screen.plain[1:] == [
        "a reply of 100002 characters is too long (at most 4096); asked again",
        RM_LINE + CHOICES,
    ]
    made.take("y")
    assert await asked == Answer.approve()


async def test_a_cancelled_request_says_it_no_longer_waits() -> None:
    made, screen = asker()
    asked = asyncio.ensure_future(made(RM))
    await settle()
    asked.cancel()
    await settle()
    assert asked.cancelled()
    assert screen.plain == [RM_LINE + CHOICES, f"no longer waiting for an answer: {RM_LINE}"]
    assert screen.said[1].style == "dim"
    assert made.prompt is None
    assert not made.take("y")  # the line goes to the conversation


async def test_two_requests_are_asked_one_at_a_time_oldest_first() -> None:
    made, screen = asker()
    second_request = request("apr_2", arguments={"cmd": "make"})
    first = asyncio.ensure_future(made(RM))
    second = asyncio.ensure_future(made(second_request))
    await settle()
    assert screen.plain == [RM_LINE + CHOICES]  # the second waits its turn, unprinted
    assert made.take("n")
    assert await first == Answer.deny(SAID_NO)
    await settle()
    assert screen.plain[-1] == second_request.line() + CHOICES
    assert not second.done()
    assert made.take("a")
    assert await second == Answer.approve_for_session()
    assert made.prompt is None


async def test_a_request_cancelled_before_its_turn_is_never_printed() -> None:
    made, screen = asker()
    first = asyncio.ensure_future(made(RM))
    second = asyncio.ensure_future(made(request("apr_2", "Why?")))
    await settle()
    second.cancel()
    await settle()
    assert screen.plain == [RM_LINE + CHOICES]
    made.take("y")
    assert await first == Answer.approve()
    await settle()
    assert screen.plain == [RM_LINE + CHOICES]
    assert made.prompt is None


async def test_at_a_question_a_command_is_asked_again_and_the_next_line_answers() -> None:
    made, screen = asker()
    asked = asyncio.ensure_future(made(request(question="Which directory?")))
    await settle()
    line = "sub_1 (research changes, depth 2) asks: Which directory?"
    assert made.take("/send sub_1 hurry")
    await settle()
    assert screen.plain == [line, line]
    assert made.prompt == ANSWER_PROMPT
    assert made.take("/usr/local")
    assert await asked == Answer.reply("/usr/local")
