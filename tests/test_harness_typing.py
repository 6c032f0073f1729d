"""``mypy --strict`` over an author's tests: the fixtures, the harness, the scripted model's
entries and typed service lookups are typed, so a wrong call is an error."""

from __future__ import annotations

from pathlib import Path

from tests.support import in_checkout
from tests.typecheck import right_and_wrong

RIGHT = '''
from __future__ import annotations

from pathlib import Path
from typing import assert_type

from host.api import ServiceContext
from host.testing import Answer, HostHarness, MakeHarness, MakeHost, call, calls, say, tool_call


class Notebook:
    def add(self, text: str) -> int:
        return 1


class Sub(HostHarness):
    pass


def test_host(make_host: MakeHost) -> None:
    host = make_host(builtins=False, config={"plugins": {}})
    assert host.tools is not None


async def test_harness(make_harness: MakeHarness) -> None:
    h = make_harness(config={})
    h.approvals.answer(Answer.approve())
    h.approvals.answer(lambda request: Answer.deny(request.tool))
    h.model.script("w", call("t", x=1), calls(tool_call("t")), say("done"))
    assert_type(make_harness(cls=Sub), Sub)
    assert_type(h.data_dir, Path)


def lookups(ctx: ServiceContext) -> int:
    found = ctx.find("notes", Notebook)
    return ctx.get("notes", Notebook).add("x") + (found.add("y") if found else 0)
'''

WRONG = '''
from __future__ import annotations

from host.api import ServiceContext
from host.testing import Answer, HostHarness, MakeHarness, MakeHost, say


class Sub(HostHarness):
    pass


class Notebook:
    def add(self, text: str) -> int:
        return 1


def test_host(make_host: MakeHost) -> None:
    make_host(bogus=True)  # wrong


async def test_harness(make_harness: MakeHarness) -> None:
    make_harness(data_dir="not a path")  # wrong
    h = make_harness()
    h.approvals.answer("yes")  # wrong
    h.model.script("w", say(42))  # wrong
    await make_harness()  # wrong
    sub: Sub = make_harness()  # wrong


def lookups(ctx: ServiceContext) -> None:
    ctx.get("notes", Notebook).remove("x")  # wrong
    ctx.find("notes", Notebook).add("x")  # wrong
    Answer.approve(True)  # wrong
'''


@in_checkout
def test_mypy_strict_types_the_harness_and_typed_lookups(tmp_path: Path) -> None:
    messages = "\n".join(right_and_wrong(tmp_path, "harness", RIGHT, WRONG))
    assert 'Unexpected keyword argument "bogus" for "__call__" of "MakeHost"' in messages
    assert '"Notebook" has no attribute "remove"' in messages
