"""Disposers and scopes: every registration returns a disposer; a scope disposes them all.

Disposal runs in reverse registration order, attempts every disposer, is idempotent, and raises
one ``ExceptionGroup`` of whatever failed.
"""

from __future__ import annotations

from collections.abc import Callable

Disposer = Callable[[], object]  # the return value, if any, is ignored


def dispose_all(disposers: list[Disposer], message: str) -> None:
    """Call each disposer once, last first; raise an ``ExceptionGroup`` of the failures."""
    failures: list[Exception] = []
    while disposers:
        disposer = disposers.pop()
        try:
            disposer()
        except Exception as error:  # every disposer is attempted; failures are aggregated
            failures.append(error)
    if failures:
        raise ExceptionGroup(message, failures)


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
