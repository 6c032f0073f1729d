"""``log_failure``: the host's own errors are one log line; anything else keeps its traceback."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from host.cli.main import main
from host.errors import HostError, log_failure

log = logging.getLogger("host.test_failure_logging")


def logged(
    caplog: pytest.LogCaptureFixture, error: BaseException, level: int = logging.ERROR
) -> logging.LogRecord:
    caplog.clear()
    with caplog.at_level(level, logger=log.name):
        try:
            raise error
        except BaseException:
            log_failure(log, "turn %s failed", "t1")
    (record,) = caplog.records
    return record


def test_a_host_error_is_one_line_with_its_code(caplog: pytest.LogCaptureFixture) -> None:
    record = logged(caplog, HostError("LOCKED", "session 's': taken over"))
    assert record.getMessage() == "turn t1 failed: session 's': taken over (LOCKED)"
    assert record.levelno == logging.ERROR and not record.exc_info


def test_a_group_of_host_errors_is_one_line_of_distinct_texts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    twice = [HostError("LOCKED", "taken over"), HostError("LOCKED", "taken over")]
    group = ExceptionGroup("disposal", [*twice, ExceptionGroup("inner", [HostError("X", "y")])])
    record = logged(caplog, group)
    assert record.getMessage() == "turn t1 failed: taken over (LOCKED); y (X)"
    assert not record.exc_info


def test_with_debug_logging_the_line_carries_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    error = HostError("LOCKED", "taken over")
    record = logged(caplog, error, level=logging.DEBUG)
    assert record.getMessage() == "turn t1 failed: taken over (LOCKED)"
    assert record.exc_info is not None and record.exc_info[1] is error


def test_without_an_exception_it_is_the_message_alone(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger=log.name):
        log_failure(log, "turn %s failed", "t1")
    assert [(r.getMessage(), r.exc_info) for r in caplog.records] == [("turn t1 failed", None)]


def test_the_cli_debug_flag_turns_the_tracebacks_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    host_logger = logging.getLogger("host")
    previous = host_logger.level
    try:
        assert main(["plugins", "--json"]) == 0
        assert not host_logger.isEnabledFor(logging.DEBUG)
        assert main(["--debug", "plugins", "--json"]) == 0
        assert host_logger.isEnabledFor(logging.DEBUG)
    finally:
        host_logger.setLevel(previous)


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
