"""The hooks a plugin may implement: the plugin author's manual.

Every hook is called once per plugin when the plugin activates, and every hook that adds
something receives a ``register`` callback, so the host knows which plugin added what and
can take it all back when the plugin deactivates. Arguments a hook may accept:
``register`` (where given), ``ctx`` (the service context), ``config`` (the plugin's structured
``Config`` instance, or None), ``scope`` (``activate`` only: record disposers on it),
``plugin`` (``activate`` only: a ``PluginHandle`` whose ``fail(error)`` takes this plugin down
as failed, e.g. when the process behind it died; call it on the host's thread).

A sub-plugin registered by ``register_plugins`` as ``NAME`` becomes the plugin
``<parent>.NAME``: it gets a row, selection (``--no-plugin parent.NAME``), a scope, a
``[plugins."parent.NAME"]`` table and reload (which calls ``load`` again) exactly like an
installed plugin, and it goes away when its parent deactivates.

A plugin is a module or object carrying these implementations (marked ``@hookimpl``), a
``requires`` tuple of service names that must be present for it to activate, and optionally
an attrs ``Config`` class filled from ``[plugins.<name>]`` in ``agent-host.toml``.
"""

from __future__ import annotations

from typing import Any

import pluggy

PROJECT = "agent_host"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def register_services(register: Any, ctx: Any, config: Any) -> None:
    """Provide services: call ``register(name, service)`` for each service this plugin owns."""


@hookspec
def register_models(register: Any, ctx: Any, config: Any) -> None:
    """Add models: call ``register(name, model)``; implies a requirement on ``models``."""


@hookspec
def register_prompt_sections(register: Any, ctx: Any, config: Any) -> None:
    """Add global system-prompt sections: call ``register(name, text, order=0)``."""


@hookspec
def register_profiles(register: Any, ctx: Any, config: Any) -> None:
    """Ship subagent profiles: call ``register(path)`` with a Markdown profile or a directory."""


@hookspec
def register_tools(register: Any, ctx: Any, config: Any) -> None:
    """Add global tools: call ``register(tool)`` with each ``host.tools.Tool`` offered."""


@hookspec
def register_plugins(register: Any, ctx: Any, config: Any) -> None:
    """Contribute sub-plugins: call ``register(name, load)``; ``load()`` returns the plugin."""


@hookspec
def activate(ctx: Any, scope: Any, config: Any, plugin: Any) -> None:
    """Do anything else on activation; record a disposer for it with ``scope.add(disposer)``."""


# Order in which the host calls the hooks of one plugin on activation.
ACTIVATION_ORDER = (
    "register_services",
    "register_models",
    "register_prompt_sections",
    "register_profiles",
    "register_tools",
    "activate",
    "register_plugins",
)
