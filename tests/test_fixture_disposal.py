"""The pytest plugin's hosts are closed after each test, and a plugin whose disposal fails then
fails the test (one line naming it), as the host's close no longer raises."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

AUTHOR_TESTS = """
from host import hookimpl


class Clingy:
    name = "clingy"

    @hookimpl
    def activate(self, scope):
        def let_go():
            raise RuntimeError("cannot let go")

        scope.add(let_go)


def test_make_host(make_host):
    assert make_host(Clingy()).plugins.records["clingy"].state == "active"


async def test_harness(make_harness):
    assert make_harness(Clingy()).host.plugins.records["clingy"].state == "active"


async def test_closed_by_the_test_itself(make_harness):
    harness = make_harness(Clingy())
    (failure,) = await harness.close()
    assert failure.plugin == "clingy"  # reported to the test: the fixture has nothing left
"""


def test_a_failed_disposal_fails_the_test_at_teardown(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(test_author=AUTHOR_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, errors=2)
    line = 'plugin "clingy": disposal failed: RuntimeError: cannot let go'
    assert result.outlines.count(line) == 2  # each error's whole report: the line, no traceback
    assert "Traceback" not in result.stdout.str()
