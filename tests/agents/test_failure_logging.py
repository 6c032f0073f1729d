"""``log_failure``: the host's own errors are one log line; anything else keeps its traceback."""

from __future__ import annotations

import logging

import pytest

from host.errors import HostError, log_failure

log = logging.getLogger("host.test_failure_logging")


def logged(caplog: pytest.LogCaptureFixture, error: BaseException) -> logging.LogRecord:
    caplog.clear()
    with caplog.at_level(logging.ERROR, logger=log.name):
        try:
            raise error
        except BaseException:
            log_failure(log, "turn %s failed", "t1")
    (record,) = caplog.records
    return record


def test_a_host_error_is_one_line_with_its_code(caplog: pytest.LogCaptureFixture) -> None:
    record = logged(caplog, HostError("LOCKED", "session 's': taken over"))
    assert record.getMessage() == "turn t1 failed: session 's': taken over (LOCKED)"
    assert record.levelno == logging.ERROR and record.exc_info is None


def test_a_group_of_host_errors_is_one_line_of_distinct_texts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    twice = [HostError("LOCKED", "taken over"), HostError("LOCKED", "taken over")]
    group = ExceptionGroup("disposal", [*twice, HostError("X", "y")])
    record = logged(caplog, group)
    assert record.getMessage() == "turn t1 failed: taken over (LOCKED); y (X)"
    assert record.exc_info is None


@pytest.mark.parametrize(
    "error",
    [
        RuntimeError("a bug"),
        ExceptionGroup("mixed", [HostError("LOCKED", "taken over"), KeyError("a bug")]),
    ],
)
def test_anything_else_keeps_its_traceback(
    caplog: pytest.LogCaptureFixture, error: Exception
) -> None:
    record = logged(caplog, error)
    assert record.getMessage() == "turn t1 failed"
    assert record.exc_info is not None and record.exc_info[1] is error
