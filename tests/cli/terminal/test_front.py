"""The terminal client's front (``TerminalFront``) in process, on a real host with the scripted
model, its prompt drawn on an output of a known size: what the prompt shows above its input."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator

import pytest
from prompt_toolkit.application import Application, create_app_session
from prompt_toolkit.data_structures import Size
from prompt_toolkit.formatted_text import fragment_list_to_text
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.cells import cell_len

from host.agents import say
from host.cli.terminal.asker import APPROVE_PROMPT
from host.cli.terminal.front import TerminalFront
from host.clients.events import AgentMessageDelta, ToolCallProgress
from host.testing import HostHarness
from tests.cli.terminal.test_asker import request
from tests.support import Gate

COLUMNS, ROWS = 40, 12


class SizedOutput(DummyOutput):
    """An output that draws nothing, of ``COLUMNS`` x ``ROWS``."""

    def get_size(self) -> Size:
        return Size(rows=ROWS, columns=COLUMNS)


@pytest.fixture
def terminal() -> Iterator[None]:
    with create_pipe_input() as keys, create_app_session(input=keys, output=SizedOutput()):
        yield


async def test_a_long_line_still_arriving_shows_its_latest_words_within_the_width(
    harness: HostHarness, terminal: None
) -> None:
    front = TerminalFront(harness.host)
    await front.attach(await harness.root("user"))
    words = [f"w{index}" for index in range(300)]
    for word in words:
        front._shown(AgentMessageDelta("root", None, "stream_1", word + " "))
    shown = fragment_list_to_text(front._message()).split("\n")
    *above, prompt = shown
    assert prompt == "you> "
    assert all(cell_len(row) <= COLUMNS for row in above)  # the prompt does not wrap them
    assert len(above) <= ROWS // 2
    assert above[-1].rstrip().endswith("w299")  # the newest text is in view as it arrives
    assert above[0].startswith("…")  # the rest of the line is printed whole once it ends
    front.close()


async def test_a_tools_progress_is_drawn_when_it_comes_not_at_the_next_key(
    harness: HostHarness, terminal: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    front = TerminalFront(harness.host)
    await front.attach(await harness.root("user"))
    drawn: list[str] = []
    monkeypatch.setattr(Application, "is_running", property(lambda _app: True))
    monkeypatch.setattr(
        Application, "invalidate",
        lambda _app: drawn.append(fragment_list_to_text(front._message())),
    )
    front._shown(ToolCallProgress("root", None, "call_1", "step 2 of 3"))
    assert drawn == ["  ⋯ step 2 of 3\nyou> "]
    front.close()


@pytest.mark.parametrize("closing", [False, True], ids=["no prompt", "prompt closing"])
async def test_a_request_opening_between_prompts_puts_nothing_aside(
    harness: HostHarness, terminal: None, monkeypatch: pytest.MonkeyPatch, closing: bool
) -> None:
    front = TerminalFront(harness.host)
    await front.attach(await harness.root("user"))
    if closing:  # Enter was pressed: the prompt still runs while it winds down
        monkeypatch.setattr(Application, "is_running", property(lambda _app: True))
        monkeypatch.setattr(Application, "is_done", property(lambda _app: True))
    buffer = front._session.default_buffer
    buffer.text = "/agents"  # the line just entered stays in the buffer until the next prompt
    asked = asyncio.ensure_future(front.asker(request()))
    await asyncio.sleep(0)
    assert front.asker.prompt == APPROVE_PROMPT
    buffer.reset()  # the next prompt starts empty, and its line answers the request
    front.asker.take("y")
    assert (await asked).decision == "approved"
    assert buffer.text == ""  # the line entered before is not given back
    assert front._put_aside is None
    front.close()


async def test_ctrl_c_outside_the_prompt_interrupts_the_turn_and_a_second_ends_the_chat(
    harness: HostHarness, terminal: None
) -> None:
    gate = Gate()
    harness.model.script("user", gate.reply(say("too late")))
    front = TerminalFront(harness.host)
    root = await harness.root("user")
    await front.attach(root)
    before = signal.getsignal(signal.SIGINT)
    with front.catching_ctrl_c():
        root.followup("think")
        await gate.entered.wait()
        os.kill(os.getpid(), signal.SIGINT)  # as the terminal sends it while no prompt runs
        await asyncio.wait_for(root.wait_idle(), 10)
        assert gate.cancelled  # the turn was interrupted, and the program goes on
        os.kill(os.getpid(), signal.SIGINT)  # the second, within the quit window
        await asyncio.sleep(0.05)
        await asyncio.wait_for(front.run(), 10)  # ends at once instead of prompting
    assert signal.getsignal(signal.SIGINT) is before
    front.close()
