"""Disposers and scopes: every registration returns a disposer; a scope disposes them all.

Disposal runs in reverse registration order, attempts every disposer, is idempotent, and raises
one ``ExceptionGroup`` of whatever failed. The two patterns every owner of disposers repeats
live here once: ``dispose_reversed``/``adispose_reversed`` (take things down newest first,
attempting each, and collect what failed) and ``roll_back`` (after an error, undo, and group
what the undoing raised with the original error).
"""

from __future__ import annotations

import operator
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

Disposer = Callable[[], object]  # the return value, if any, is ignored

T = TypeVar("T")


def dispose_reversed(pending: list[T], dispose: Callable[[T], object]) -> list[tuple[T, Exception]]:
    """Pop ``pending`` empty, newest first, calling ``dispose`` on each item; every item is
    attempted. Returns ``(item, error)`` for each call that raised an ``Exception``, in call
    order (anything else, such as ``KeyboardInterrupt``, propagates at once)."""
    failures: list[tuple[T, Exception]] = []
    while pending:
        item = pending.pop()
        try:
            dispose(item)
        except Exception as error:  # every item is attempted; failures are aggregated
            failures.append((item, error))
    return failures


async def adispose_reversed(
    pending: list[T], dispose: Callable[[T], Awaitable[object]]
) -> list[tuple[T, Exception]]:
    """``dispose_reversed`` for an asynchronous ``dispose``: each call is awaited in turn."""
    failures: list[tuple[T, Exception]] = []
    while pending:
        item = pending.pop()
        try:
            await dispose(item)
        except Exception as error:  # every item is attempted; failures are aggregated
            failures.append((item, error))
    return failures


def dispose_errors(disposers: list[Disposer]) -> list[Exception]:
    """Call each disposer once, last first (emptying the list); return what they raised."""
    return [error for _, error in dispose_reversed(disposers, operator.call)]


def dispose_all(disposers: list[Disposer], message: str) -> None:
    """Call each disposer once, last first; raise an ``ExceptionGroup`` of the failures."""
    failures = dispose_errors(disposers)
    if failures:
        raise ExceptionGroup(message, failures)


def roll_back(
    error: BaseException,
    undo: Callable[[], Sequence[Exception]],
    message: str,
    *,
    chain: bool = True,
) -> None:
    """Call from the handler of ``error``: run ``undo``, which returns what it failed to undo.

    Nothing failed: return, and the caller re-raises ``error`` (a bare ``raise``). Otherwise
    raise one group ``message`` holding ``error`` first, then the failures: an
    ``ExceptionGroup`` when they are all ``Exception``, else a ``BaseExceptionGroup``; its
    cause is ``error`` (``chain=False``: no cause, the context suppressed).
    """
    failures = undo()
    if not failures:
        return
    group = BaseExceptionGroup(message, [error, *failures])
    if chain:
        raise group from error
    raise group from None


def once(disposer: Disposer) -> Disposer:
    """Wrap ``disposer`` so calling it again does nothing."""
    done = False

    def dispose() -> None:
        nonlocal done
        if not done:
            done = True
            disposer()

    return dispose


class Scope:
    """Records the disposer of everything one owner registered, and disposes it all at once."""

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self._disposers: list[Disposer] = []
        self._disposed = False

    @property
    def disposed(self) -> bool:
        """True once ``dispose`` has run."""
        return self._disposed

    def add(self, disposer: Disposer) -> Disposer:
        """Record ``disposer``; returns it so callers can chain. Refused after disposal."""
        if self._disposed:
            raise RuntimeError(f"scope of {self.owner} is already disposed")
        self._disposers.append(disposer)
        return disposer

    def dispose(self) -> None:
        """Dispose everything recorded, newest first; a second call does nothing."""
        if self._disposed:
            return
        self._disposed = True
        dispose_all(self._disposers, f"disposing {self.owner} failed")
