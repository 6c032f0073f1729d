"""The hooks a plugin may implement: the plugin author's manual.

Every ``register_*`` hook and ``activate`` is called once per plugin when the plugin
activates, and every hook that adds something (the ``register_*`` hooks) receives a
``register`` callback, so the host knows which plugin added what and can take it all back when
the plugin deactivates. Arguments a hook may accept: ``register`` (``register_*`` only),
``ctx`` (the service context), ``config`` (the plugin's structured ``Config`` instance, or
None), ``scope`` (``activate`` only: record disposers on it), ``plugin`` (``activate`` only: a
``PluginHandle`` whose ``fail(error)`` takes this plugin down as failed, e.g. when the process
behind it died; call it on the host's thread), ``state`` (``take_over_state`` only).

A sub-plugin registered by ``register_plugins`` as ``NAME`` becomes the plugin
``<parent>.NAME``: it gets a row, selection (``--no-plugin parent.NAME``), a scope, a
``[plugins."parent.NAME"]`` table and reload (which calls ``load`` again) exactly like an
installed plugin, and it goes away when its parent deactivates.

Two hooks are called only at a hot reload, to carry state from the running version to its
successor: ``hand_over_state`` on the running one, then ``take_over_state`` on the new one,
before its other hooks, while the running one still serves (and owns) the state. If the reload
fails, the state stays the old version's; if it succeeds, the old version is disposed. Either
way, the version giving the state up (the old one after a swap, a new one that failed) has
``plugin.handed_over`` true when the state was not None, so its disposers leave it alone.

A plugin is a module or object carrying these implementations (marked ``@hookimpl``), a
``requires`` tuple of service names that must be present for it to activate, a ``uses`` tuple
of service names it uses when present (it restarts when their provider changes), and
optionally an attrs ``Config`` class filled from ``[plugins.<name>]`` in ``agent-host.toml``.

The ``register`` callbacks' types (``RegisterTool``, …) are defined here, beside their hooks
(``RegisterProfile`` beside ``ProfileLibrary.register`` in ``host.profiles.library``); ``host.api``
re-exports them with ``ServiceContext``; a plugin imports them from there and annotates its
implementations with them so that ``mypy --strict`` checks its calls. The guide, with an
example per hook, is ``docs/plugin-guide.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import pluggy

if TYPE_CHECKING:  # the author API (``host.api``) types the arguments; nothing at run time
    from host.agents.models import Model, ModelFactory
    from host.api import ServiceContext
    from host.disposal import Disposer, Scope
    from host.plugins.handles import PluginHandle
    from host.tools.tool import Tool

PROJECT = "agent_host"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

IMPL_MARKER = f"{PROJECT}_impl"
"""The attribute where ``pluggy.HookimplMarker`` keeps a marked function's options. pluggy
reads it the same way (``parse_hookimpl_opts``) but names it in no public API; the host reads
it directly to list a plugin's hooks without registering it, and a test pins the name."""

UNHONOURED_OPTIONS = ("tryfirst", "trylast", "wrapper", "hookwrapper")
"""``@hookimpl`` options that order or wrap the calls of several plugins: the host calls each
plugin's hooks on their own, so a plugin using one is refused rather than silently misread."""


class RegisterService(Protocol):
    """``register`` of ``register_services``: provide the service ``name``."""

    def __call__(self, name: str, service: Any) -> None: ...


class RegisterModel(Protocol):
    """``register`` of ``register_models``: a model object, or a zero-argument factory that
    builds it on first use."""

    def __call__(self, name: str, model: Model | ModelFactory) -> None: ...


class RegisterPromptSection(Protocol):
    """``register`` of ``register_prompt_sections``: a global system-prompt section; lower
    ``order`` comes first."""

    def __call__(self, name: str, text: str, order: int = 0) -> None: ...


class RegisterTool(Protocol):
    """``register`` of ``register_tools``: a global tool; returns the disposer that takes it
    back early (the plugin's scope takes it back anyway when the plugin goes away)."""

    def __call__(self, tool: Tool) -> Disposer: ...


class RegisterPlugin(Protocol):
    """``register`` of ``register_plugins``: the sub-plugin ``<parent>.<name>``, whose
    ``load()`` returns the plugin object; ``blocked`` (a reason) lists it as blocked instead."""

    def __call__(
        self, name: str, load: Callable[[], object], *, blocked: str | None = None
    ) -> None: ...


@hookspec
def register_services(register: RegisterService, ctx: ServiceContext, config: Any) -> None:
    """Provide services: call ``register(name, service)`` for each service this plugin owns."""


@hookspec
def register_models(register: RegisterModel, ctx: ServiceContext, config: Any) -> None:
    """Add models: call ``register(name, model)``; implies a requirement on ``models``."""


@hookspec
def register_prompt_sections(
    register: RegisterPromptSection, ctx: ServiceContext, config: Any
) -> None:
    """Add global system-prompt sections: call ``register(name, text, order=0)``."""


@hookspec
def register_tools(register: RegisterTool, ctx: ServiceContext, config: Any) -> None:
    """Add global tools: call ``register(tool)`` with each ``host.tools.Tool`` offered."""


@hookspec
def register_plugins(register: RegisterPlugin, ctx: ServiceContext, config: Any) -> None:
    """Contribute sub-plugins: call ``register(name, load)``; ``load()`` returns the plugin."""


@hookspec
def activate(ctx: ServiceContext, scope: Scope, config: Any, plugin: PluginHandle) -> None:
    """Do anything else on activation; record a disposer for it with ``scope.add(disposer)``."""


# Order in which the host calls the hooks of one plugin on activation; the registration table
# (``host.plugins.registrations``) keeps it, with the hooks a layer above adds in between.
ACTIVATION_ORDER = (
    "register_services",
    "register_models",
    "register_prompt_sections",
    "register_tools",
    "activate",
    "register_plugins",
)


@hookspec
def hand_over_state(ctx: ServiceContext, config: Any) -> object:
    """Hot reload: return what the new version starts from (kept here until the swap)."""


@hookspec
def take_over_state(state: Any, ctx: ServiceContext, config: Any) -> None:
    """Hot reload: start from ``state``, which the old version handed over, before other hooks."""


# The hooks of a hot reload's state hand-over (not called at a plain activation).
HANDOVER_HOOKS = ("hand_over_state", "take_over_state")
