"""What the host knows about one plugin: origin, state, requirements, error, what it added."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import attrs

from host.disposal import Scope
from host.plugins.discovery import PluginCandidate

if TYPE_CHECKING:
    from host.plugins.lifecycle import PluginHandle

PluginState = Literal["active", "inactive", "failed", "blocked"]


def describe_error(error: BaseException) -> str:
    """One line for a plugin error: its type and message, groups flattened."""
    if isinstance(error, ExceptionGroup):
        return "; ".join(describe_error(e) for e in error.exceptions)
    text = str(error).strip().splitlines()
    message = text[0] if text else ""
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


@attrs.frozen
class DisposalFailure:
    """A plugin whose disposers raised while it was taken down (the plugin is ``failed``)."""

    plugin: str
    error: BaseException

    def line(self) -> str:
        """The one line the CLI prints: ``plugin "<name>": disposal failed: <error>``."""
        return f'plugin "{self.plugin}": disposal failed: {describe_error(self.error)}'


@attrs.define
class PluginRecord:
    """One plugin's lifecycle. ``state`` moves inactive → active → inactive …, or to failed.

    ``uses`` names services it uses when present (it restarts when their provider changes).
    ``missing`` lists required services that are absent while inactive; ``error`` is a one-line
    description while failed or blocked; ``tools`` names the global tools it registered,
    ``services`` the services, and ``displaced`` those a built-in provided until then.
    ``hooks`` names the hooks its code implements, known from its import on (even when it
    then failed, say on a bad configuration table).
    """

    candidate: PluginCandidate
    state: PluginState = "inactive"
    obj: Any = None
    requires: tuple[str, ...] = ()
    uses: tuple[str, ...] = ()
    config: Any = None
    error: str | None = None
    scope: Scope | None = None
    tools: list[str] = attrs.field(factory=list)
    services: list[str] = attrs.field(factory=list)
    displaced: list[str] = attrs.field(factory=list)
    models: list[str] = attrs.field(factory=list)
    """The models it registered (kept for a reload's name check; not in its row)."""
    hooks: frozenset[str] = frozenset()
    exception: BaseException | None = None
    """What made it fail, kept for ``--debug`` (``error`` is its one line)."""
    handle: PluginHandle | None = None
    """The ``plugin`` argument of the current activation (one per activation)."""

    def fail(self, error: BaseException) -> None:
        """Mark the plugin ``failed`` by ``error``: its one-line text, the exception kept."""
        self.state, self.error, self.exception = "failed", describe_error(error), error

    @property
    def name(self) -> str:
        """The plugin name (the entry point name)."""
        return self.candidate.name

    def missing(self, present: set[str]) -> list[str]:
        """Required services not in ``present``."""
        return [name for name in self.requires if name not in present]

    def describe(self, present: set[str]) -> dict[str, Any]:
        """The row ``agent-host plugins --json`` prints."""
        return {
            "name": self.name,
            "distribution": self.candidate.distribution,
            "version": self.candidate.version,
            "entry_point": self.candidate.entry_point,
            "builtin": self.candidate.builtin,
            "parent": self.candidate.parent,
            "state": self.state,
            "requires": list(self.requires),
            "uses": list(self.uses),
            "missing": self.missing(present) if self.state == "inactive" else [],
            "error": self.error,
            "tools": list(self.tools),
            "services": list(self.services),
        }
