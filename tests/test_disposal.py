"""The shared disposal helpers: dispose newest first collecting failures, and roll back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from host import hookimpl
from host.disposal import (
    Disposer,
    adispose_reversed,
    dispose_all,
    dispose_errors,
    dispose_reversed,
    roll_back,
)
from host.testing import build_host


def test_dispose_reversed_attempts_every_item_newest_first_and_pairs_failures() -> None:
    seen: list[str] = []
    boom, bang = RuntimeError("b"), ValueError("d")

    def dispose(item: str) -> None:
        seen.append(item)
        if item == "b":
            raise boom
        if item == "d":
            raise bang

    pending = ["a", "b", "c", "d"]
    failed = dispose_reversed(pending, dispose)
    assert seen == ["d", "c", "b", "a"]
    assert failed == [("d", bang), ("b", boom)]  # in call order
    assert pending == []  # consumed: nothing is disposed twice


def test_dispose_reversed_lets_a_base_exception_through_at_once() -> None:
    seen: list[int] = []

    def dispose(item: int) -> None:
        seen.append(item)
        if item == 2:
            raise KeyboardInterrupt

    pending = [1, 2, 3]
    with pytest.raises(KeyboardInterrupt):
        dispose_reversed(pending, dispose)
    assert seen == [3, 2] and pending == [1]


def test_dispose_reversed_disposes_what_a_disposer_adds_meanwhile() -> None:
    seen: list[str] = []
    pending: list[str] = ["a", "b"]

    def dispose(item: str) -> None:
        seen.append(item)
        if item == "b":
            pending.append("late")

    assert dispose_reversed(pending, dispose) == []
    assert seen == ["b", "late", "a"]


async def test_adispose_reversed_awaits_each_newest_first_and_pairs_failures() -> None:
    seen: list[int] = []
    broken = OSError("2")

    async def dispose(item: int) -> None:
        seen.append(item)
        if item == 2:
            raise broken

    failed = await adispose_reversed([1, 2, 3], dispose)
    assert seen == [3, 2, 1]
    assert failed == [(2, broken)]


def test_dispose_errors_and_dispose_all_group_the_failures_in_call_order() -> None:
    log: list[str] = []
    first, second = RuntimeError("x"), RuntimeError("z")

    def disposer(name: str, error: Exception | None = None) -> Disposer:
        def dispose() -> None:
            log.append(name)
            if error is not None:
                raise error

        return dispose

    assert dispose_errors([disposer("x", first), disposer("y"), disposer("z", second)]) == [
        second,
        first,
    ]
    assert log == ["z", "y", "x"]
    disposers = [disposer("x", first), disposer("z", second)]
    with pytest.raises(ExceptionGroup) as caught:
        dispose_all(disposers, "disposing things failed")
    assert caught.value.message == "disposing things failed"
    assert caught.value.exceptions == (second, first)
    assert disposers == []
    dispose_all([], "never raised")


def test_roll_back_returns_when_the_undo_succeeded_so_the_caller_reraises() -> None:
    original = RuntimeError("original")
    undone: list[bool] = []

    def undo() -> list[Exception]:
        undone.append(True)
        return []

    with pytest.raises(RuntimeError) as caught:
        try:
            raise original
        except RuntimeError as error:
            roll_back(error, undo, "never seen")
            raise
    assert caught.value is original and undone == [True]


def test_roll_back_groups_the_original_first_then_the_undo_failures() -> None:
    original, stuck = RuntimeError("original"), OSError("stuck")
    with pytest.raises(ExceptionGroup) as caught:
        try:
            raise original
        except RuntimeError as error:
            roll_back(error, lambda: [stuck], "doing it failed and its rollback failed")
            raise
    group = caught.value
    assert type(group) is ExceptionGroup
    assert group.message == "doing it failed and its rollback failed"
    assert group.exceptions == (original, stuck)
    assert group.__cause__ is original


def test_roll_back_without_chain_suppresses_the_context() -> None:
    original, stuck = RuntimeError("original"), OSError("stuck")
    with pytest.raises(ExceptionGroup) as caught:
        try:
            raise original
        except RuntimeError as error:
            roll_back(error, lambda: [stuck], "installing failed", chain=False)
            raise
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_roll_back_of_a_base_exception_raises_a_base_exception_group() -> None:
    cancelled, stuck = KeyboardInterrupt(), OSError("stuck")
    with pytest.raises(BaseExceptionGroup) as caught:
        try:
            raise cancelled
        except BaseException as error:
            roll_back(error, lambda: [stuck], "interrupted and its rollback failed")
            raise
    assert not isinstance(caught.value, ExceptionGroup)
    assert caught.value.exceptions == (cancelled, stuck)


class _Service:
    """A service whose ``aclose`` is logged and may raise."""

    def __init__(self, name: str, log: list[str], error: Exception | None = None) -> None:
        self.name, self.log, self.error = name, log, error

    async def aclose(self) -> None:
        self.log.append(self.name)
        if self.error is not None:
            raise self.error


async def test_host_aclose_shuts_services_down_newest_first_and_reports_their_providers(
    tmp_path: Path,
) -> None:
    log: list[str] = []
    stuck = OSError("will not close")

    class First:
        @staticmethod
        @hookimpl
        def register_services(register: Any) -> None:
            register("first", _Service("first", log, stuck))

    class Second:
        requires = ("first",)

        @staticmethod
        @hookimpl
        def register_services(register: Any) -> None:
            register("second", _Service("second", log))
            register("plain", object())  # no aclose: skipped

    host = build_host(First, Second, data_dir=tmp_path, builtins=False)
    failures = await host.aclose()
    assert log == ["second", "first"]
    assert [(f.plugin, f.error) for f in failures] == [("First", stuck)]
    assert host.disposal_failures[-1:] == failures
