"""A small cancel token passed as ``signal`` to tools and service calls."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeGuard

from host.errors import HostError


class CancelSignal:
    """Set once, observed many times; ``raise_if_set`` raises the caller's own coded error.

    Waiters on ``wait()`` wake when the signal is set. Setting is idempotent.
    """

    def __init__(self) -> None:
        self._set = False
        self._event: asyncio.Event | None = None
        self.reason: str | None = None

    def set(self, reason: str | None = None) -> None:
        """Cancel; the first reason given is kept."""
        if self._set:
            return
        self._set = True
        self.reason = reason
        if self._event is not None:
            self._event.set()

    def is_set(self) -> bool:
        """True once ``set`` was called."""
        return self._set

    async def wait(self) -> None:
        """Return when the signal is set (at once if it already is)."""
        if self._set:
            return
        if self._event is None:
            self._event = asyncio.Event()
        await self._event.wait()

    def raise_if_set(self, error: Callable[[str, str], HostError] = HostError) -> None:
        """Raise ``error("CANCELLED", …)`` if the signal is set; ``error`` is the service's type."""
        if self._set:
            raise error("CANCELLED", self.reason or "cancelled")


def cancelled(signal: CancelSignal | None) -> TypeGuard[CancelSignal]:
    """True when ``signal`` is given and set (``None`` means no cancellation requested)."""
    return signal is not None and signal.is_set()


def raise_if_cancelled(
    signal: CancelSignal | None, error: Callable[[str, str], HostError] = HostError
) -> None:
    """``signal.raise_if_set(error)`` that accepts ``None`` (no cancellation requested)."""
    if signal is not None:
        signal.raise_if_set(error)
