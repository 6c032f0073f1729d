"""The pytest plugin (``host.testing``) in an author's project: its fixtures run coroutine tests
under pytest-asyncio's default strict mode, and change nothing under auto mode."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

AUTHOR_TESTS = """
import agent_host_example
import pytest

from host.agents import say
from host.testing import call_tool


async def test_harness(harness):
    root = await harness.root()
    harness.model.script("root", say("hi"))
    root.followup("hello")
    await root.wait_idle()
    assert root.last_answer == "hi"


async def test_make_host(make_host):
    host = make_host(("word_count", agent_host_example))
    result = await call_tool(host, "word_count", {"text": "a b"}, agent=object())
    assert result.text == "2 words"


@pytest.fixture
def mine(make_harness):
    return make_harness()


async def test_through_an_own_fixture(mine):
    assert (await mine.root()).label == "root"


@pytest.mark.parametrize("label", ["a", "b"])
async def test_parametrized(harness, label):
    assert (await harness.root(label)).label == label


class TestGrouped:
    async def test_in_a_class(self, harness):
        assert await harness.root()


@pytest.mark.asyncio(loop_scope="module")
async def test_own_marker_kept(request, harness):
    assert request.node.get_closest_marker("asyncio").kwargs == {"loop_scope": "module"}


def test_sync(make_host):
    assert make_host().services.agents is not None


async def test_unrelated():
    pass
"""

ASYNC_USING_FIXTURES = 7  # every coroutine test above but test_unrelated


def author_project(pytester: pytest.Pytester, mode: str | None) -> None:
    """An author's project: the tests above, pytest-asyncio in ``mode`` (None: unset)."""
    lines = ["[pytest]", "asyncio_default_fixture_loop_scope = function"]
    if mode is not None:
        lines.append(f"asyncio_mode = {mode}")
    pytester.makeini("\n".join(lines) + "\n")
    pytester.makepyfile(test_author=AUTHOR_TESTS)


def marked(pytester: pytest.Pytester) -> list[str]:
    """The test ids collected with pytest-asyncio's marker."""
    result = pytester.runpytest_subprocess("--collect-only", "-q", "-m", "asyncio")
    return [line for line in result.outlines if "::" in line]


def test_fixtures_run_coroutine_tests_in_the_default_strict_mode(pytester):
    author_project(pytester, None)
    result = pytester.runpytest_subprocess(
        "-W", "error", "--deselect", "test_author.py::test_unrelated"
    )
    result.assert_outcomes(passed=ASYNC_USING_FIXTURES + 1, deselected=1)
    collected = marked(pytester)  # one collection run (a pytest process) for both checks
    assert "test_author.py::test_unrelated" not in collected
    assert len(collected) == ASYNC_USING_FIXTURES


def test_auto_mode_is_unchanged(pytester):
    author_project(pytester, "auto")
    result = pytester.runpytest_subprocess("-W", "error")
    result.assert_outcomes(passed=ASYNC_USING_FIXTURES + 2)
    assert len(marked(pytester)) == ASYNC_USING_FIXTURES + 1
