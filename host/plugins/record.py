"""What the host knows about one plugin: origin, state, requirements, error, what it added."""

from __future__ import annotations

import functools
import operator
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

import attrs

from host.disposal import Scope
from host.errors import HostError
from host.plugins import hookspecs
from host.plugins.discovery import PluginCandidate
from host.plugins.selection import BLOCKED_BY_SELECTION

if TYPE_CHECKING:
    from host.plugins.handles import PluginHandle

PluginState = Literal["active", "inactive", "failed", "blocked"]


def describe_error(error: BaseException) -> str:
    """One line for a plugin error: its type and message, groups flattened."""
    if isinstance(error, ExceptionGroup):
        return "; ".join(describe_error(e) for e in error.exceptions)
    text = str(error).strip().splitlines()
    message = text[0] if text else ""
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def implemented_hooks(obj: Any, hooks: Iterable[str]) -> frozenset[str]:
    """The hooks (of ``hooks``) that ``obj`` implements."""
    return frozenset(
        hook for hook in hooks if hasattr(getattr(obj, hook, None), hookspecs.IMPL_MARKER)
    )


def service_names(obj: Any, attribute: str) -> tuple[str, ...]:
    """A plugin's ``requires`` or ``uses``: a tuple of service names (default empty)."""
    names = getattr(obj, attribute, ())
    if isinstance(names, str) or not all(isinstance(n, str) for n in names):
        raise TypeError(f"{attribute} must be a tuple of service names")
    return tuple(names)


def requirements(obj: Any, hooks: frozenset[str], implied: Mapping[str, str]) -> tuple[str, ...]:
    """The services ``obj`` requires: its ``requires``, plus those ``implied`` (hook → service,
    from the registration table: ``models`` for ``register_models``) by the hooks it has."""
    requires = service_names(obj, "requires")
    for hook, service in implied.items():
        if hook in hooks and service not in requires:
            requires += (service,)
    return requires


@attrs.frozen
class DisposalFailure:
    """A plugin whose disposers raised while it was taken down (the plugin is ``failed``)."""

    plugin: str
    error: BaseException

    def line(self) -> str:
        """The one line the CLI prints: ``plugin "<name>": disposal failed: <error>``."""
        return f'plugin "{self.plugin}": disposal failed: {describe_error(self.error)}'


@attrs.frozen
class RecordSnapshot:
    """A record's plugin object, what adopting it set, and its activation (``PluginRecord.
    snapshot``): what ``PluginRecord.restore`` puts back, as a hot reload's swap installs those
    of the staged version's record."""

    obj: Any
    requires: tuple[str, ...]
    uses: tuple[str, ...]
    config: Any
    hooks: frozenset[str]
    scope: Scope | None
    handle: PluginHandle | None
    added: defaultdict[str, list[str]]


_SNAPSHOT = tuple(field.name for field in attrs.fields(RecordSnapshot))
_snapshot_of = operator.attrgetter(*_SNAPSHOT)


@attrs.define
class PluginRecord:
    """One plugin's lifecycle. ``state`` moves inactive → active → inactive …, or to failed.

    ``uses`` names services it uses when present (it restarts when their provider changes).
    ``missing`` lists required services that are absent while inactive; ``error`` is a one-line
    description while failed or blocked; ``added`` names, by hook, what its current activation
    registered (``tools``, ``services`` and ``models`` read it), and under ``displaced`` the
    services a built-in provided until then.
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
    added: defaultdict[str, list[str]] = attrs.field(factory=functools.partial(defaultdict, list))
    lost_tools: list[str] = attrs.field(factory=list)
    """The tools it offered when it was taken down as failed (a call of one answers its error;
    forgotten when it activates again)."""
    hooks: frozenset[str] = frozenset()
    exception: BaseException | None = None
    """What made it fail, kept for ``--debug`` (``error`` is its one line)."""
    handle: PluginHandle | None = None
    """The ``plugin`` argument of the current activation (one per activation)."""

    def fail(self, error: BaseException | str) -> None:
        """Mark the plugin ``failed`` by ``error``: its one-line text, the exception (when it is
        one) kept for ``--debug``."""
        if isinstance(error, str):
            self.state, self.error, self.exception = "failed", error, None
        else:
            self.state, self.error, self.exception = "failed", self.explain(error), error

    def explain(self, error: BaseException, obj: Any = None) -> str:
        """``error`` as one line, ending with where in the plugin's code (that of ``obj``, else
        the current object, else the entry point's module) it came from (``host.plugins.
        origin``); a ``HostError`` (raised on purpose, its message naming the cause, such as a
        bad configuration) is its line alone."""
        from host.plugins.origin import module_of, origin

        if isinstance(error, HostError):
            return describe_error(error)
        found = obj if obj is not None else self.obj
        module = module_of(found) if found is not None else None
        module = module or self.candidate.module
        return describe_error(error) + origin(error, module, whole=self.candidate.builtin)

    def activated(self) -> None:
        """Mark the plugin ``active``: whatever failed before is forgotten."""
        self.state, self.error, self.exception = "active", None, None
        self.lost_tools = []

    def deactivated(self) -> None:
        """Mark the plugin ``inactive`` (taken down, or given another chance after failing)."""
        self.state, self.error = "inactive", None

    def block(self, reason: str = BLOCKED_BY_SELECTION) -> None:
        """Mark the plugin ``blocked`` with ``reason`` (it stays out until unblocked)."""
        self.state, self.error = "blocked", reason

    def snapshot(self) -> RecordSnapshot:
        """The plugin object, what came with it and its activation, to put back with
        ``restore``."""
        return RecordSnapshot(*_snapshot_of(self))

    def restore(self, snapshot: RecordSnapshot | PluginRecord) -> None:
        """Make the plugin object and activation of ``snapshot`` (or of another record: a hot
        reload's staged version, at the swap) this record's."""
        for name in _SNAPSHOT:
            setattr(self, name, getattr(snapshot, name))

    @property
    def tools(self) -> list[str]:
        """The global tools the current activation registered."""
        return self.added["register_tools"]

    @property
    def services(self) -> list[str]:
        """The services the current activation registered."""
        return self.added["register_services"]

    @property
    def models(self) -> list[str]:
        """The models it registered (kept for a reload's name check; not in its row)."""
        return self.added["register_models"]

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
