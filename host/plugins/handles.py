"""What plugins hold of the lifecycle: their own ``PluginHandle`` and the ``plugins`` service."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol


class Record(Protocol):
    """What handles read of a plugin's record (``host.plugins.record.PluginRecord``, which
    reads the hookspecs: naming it here would lead ``host.api``, which exports ``PluginHandle``,
    back to itself): its state, its activation's handle, and what it lost when it failed."""

    @property
    def state(self) -> str:
        """``active``, ``inactive``, ``failed`` or ``blocked``."""
        ...

    @property
    def handle(self) -> PluginHandle | None:
        """The ``plugin`` argument of the current activation."""
        ...

    @property
    def error(self) -> str | None:
        """The one-line error while failed or blocked."""
        ...

    @property
    def lost_tools(self) -> Sequence[str]:
        """The tools it offered when it was taken down as failed."""
        ...


class Lifecycle(Protocol):
    """What handles use of the plugin lifecycle (``host.plugins.lifecycle.PluginLifecycle``,
    which imports this module): its records, and taking one plugin down or back up."""

    @property
    def records(self) -> Mapping[str, Record]:
        """Every plugin's record by name."""
        ...

    def fail(self, name: str, error: str) -> None:
        """Take plugin ``name`` down as failed with ``error``."""
        ...

    def recover(self, name: str) -> None:
        """Activate plugin ``name`` again after a failure."""
        ...


class PluginHandle:
    """The ``plugin`` argument of ``activate``: one per activation of a plugin.

    ``fail(error)`` takes this plugin down as failed; ``recover()`` brings it back.
    ``handed_over`` is true once this activation's state went to another activation at a hot
    reload (see the hookspecs ``hand_over_state`` and ``take_over_state``): its disposers
    leave that state alone.
    """

    def __init__(self, lifecycle: Lifecycle, name: str) -> None:
        self._lifecycle = lifecycle
        self.name = name
        self.handed_over = False

    def fail(self, error: str) -> None:
        """Take this plugin down as ``failed`` with the one-line ``error`` (host thread only).

        Only while this activation is the plugin's current one: a late call from a version a
        reload replaced, or from a new version still being staged, never takes it down.
        """
        record = self._lifecycle.records.get(self.name)
        if record is not None and record.handle is self:
            self._lifecycle.fail(self.name, error)


    def recover(self) -> None:
        """Activate this plugin again, with the same object, after ``fail`` took it down (say,
        its server came back); only while that failure is this activation's (host thread only).
        """
        record = self._lifecycle.records.get(self.name)
        if record is not None and record.handle is self:
            self._lifecycle.recover(self.name)


class PluginStates:
    """The ``plugins`` service: a read-only view of every plugin's state (sub-plugins too).

    A plugin that depends on another being up now (e.g. the delegation tool checking that a
    profile's MCP servers are connected) asks ``is_active`` instead of guessing from tools.
    """

    def __init__(self, lifecycle: Lifecycle) -> None:
        self._lifecycle = lifecycle

    def state(self, name: str) -> str | None:
        """``active``, ``inactive``, ``failed`` or ``blocked``; None for an unknown plugin."""
        record = self._lifecycle.records.get(name)
        return record.state if record is not None else None

    def lost_tool(self, tool: str) -> str | None:
        """The error of the failed plugin that offered ``tool`` when it failed, else None."""
        for record in self._lifecycle.records.values():
            if record.state == "failed" and tool in record.lost_tools:
                return record.error
        return None

    def is_active(self, name: str) -> bool:
        """Whether plugin ``name`` is loaded and active."""
        return self.state(name) == "active"
