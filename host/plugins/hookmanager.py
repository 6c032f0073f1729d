"""The host's pluggy manager: pluggy's, plus what the plugin lifecycle asks of it cheaply.

It parses plain module plugins without ``inspect.getattr_static`` and remembers, per plugin,
its implementations in pluggy's calling order, so that activating, checking and closing a
plugin never scans the implementations of every other plugin.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import FunctionType, MethodType, ModuleType
from typing import Any, cast

import pluggy

from host.naming import did_you_mean
from host.plugins import hookspecs

# Attributes the module type answers itself (data descriptors): for these, and only these,
# ``inspect.getattr_static`` on a module does not return what the module's ``__dict__`` holds.
_MODULE_TYPE_NAMES = frozenset(
    name
    for klass in ModuleType.__mro__
    for name, value in vars(klass).items()
    if hasattr(type(value), "__set__") or hasattr(type(value), "__delete__")
)
_METHODS = (staticmethod, classmethod, MethodType)


class HookManager(pluggy.PluginManager):
    """The pluggy manager, with a cheap path for the common plugin: a module.

    pluggy looks every name of a plugin up with ``inspect.getattr_static`` to find its hook
    implementations, which costs more than registering a small module otherwise. In a module
    (``getattr_static`` returns what its ``__dict__`` holds), a plain function's options are
    its marker and anything that is not a function or method is skipped; the rest (static,
    class and bound methods, other plugin objects) goes through pluggy's own parsing.
    """

    def __init__(self, project_name: str) -> None:
        super().__init__(project_name)
        self._marker = hookspecs.IMPL_MARKER if project_name == hookspecs.PROJECT else ""
        # id(plugin) → hook → the plugin's implementations of it, in pluggy's order
        self._impls: dict[int, dict[str, list[pluggy.HookImpl]]] = {}
        self._parsing: dict[str, int] = {}  # hook → implementations found while registering

    def register(self, plugin: Any, name: str | None = None) -> str | None:
        """pluggy's ``register``, remembering the implementations of ``plugin`` per hook."""
        self._parsing = {}
        registered = super().register(plugin, name)
        self._impls[id(plugin)] = {
            hook: self._registered(plugin, hook, count) for hook, count in self._parsing.items()
        }
        return registered

    def _registered(self, plugin: Any, hook: str, count: int) -> list[pluggy.HookImpl]:
        """The ``count`` implementations of ``hook`` by ``plugin``, just registered.

        Searched from the end: pluggy puts a new implementation after all others but wrappers
        and ``tryfirst`` ones, so this stops after a few of them instead of reading them all.
        """
        found: list[pluggy.HookImpl] = []
        for impl in reversed(getattr(self.hook, hook).get_hookimpls()):
            if impl.plugin is plugin:
                found.append(impl)
                if len(found) == count:
                    break
        found.reverse()
        return found

    def _verify_hook(self, hook: pluggy.HookCaller, hookimpl: pluggy.HookImpl) -> None:
        """pluggy's check, saying which argument is not in the hookspec, and the hookspec."""
        spec = hook.spec
        if spec is not None:
            allowed = (*spec.argnames, *spec.kwargnames)
            for argument in hookimpl.argnames:
                if argument not in allowed:
                    hint = did_you_mean(argument, allowed)
                    raise pluggy.PluginValidationError(
                        hookimpl.plugin,
                        f'argument "{argument}" is not in the hookspec '
                        f"{hook.name}({', '.join(allowed)}){hint}",
                    )
        super()._verify_hook(hook, hookimpl)

    def unregister(self, plugin: Any = None, name: str | None = None) -> Any:
        """pluggy's ``unregister``, forgetting the plugin's implementations."""
        removed = super().unregister(plugin, name)
        if removed is not None:
            self._impls.pop(id(removed), None)
        return removed

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> pluggy.HookimplOpts | None:
        """pluggy's parsing, short-cut for the attributes of a plain module."""
        opts: pluggy.HookimplOpts | None
        if type(plugin) is ModuleType and name not in _MODULE_TYPE_NAMES:
            value = plugin.__dict__.get(name)
            if isinstance(value, FunctionType):
                marker = getattr(value, self._marker, None)
                if not isinstance(marker, dict):
                    return None
                opts = cast(pluggy.HookimplOpts, marker)
            elif isinstance(value, _METHODS):
                opts = super().parse_hookimpl_opts(plugin, name)
            else:
                return None
        else:
            opts = super().parse_hookimpl_opts(plugin, name)
        if opts is not None:
            hook = opts.get("specname") or name
            self._parsing[hook] = self._parsing.get(hook, 0) + 1
        return opts

    def check_plugin(self, plugin: Any) -> None:
        """Refuse a registered plugin implementing a hook nobody specified, or using an
        ``@hookimpl`` option the host does not honour (``hookspecs.UNHONOURED_OPTIONS``)."""
        hooks = self._impls.get(id(plugin), {})
        callers = vars(self.hook).values()
        unknown = [c.name for c in callers if c.spec is None and c.name in hooks]
        if unknown:
            specified = [c.name for c in callers if c.spec is not None]
            hint = did_you_mean(unknown[0], specified)
            raise AttributeError(f'unknown hook "{unknown[0]}"{hint}')
        for hook, impls in hooks.items():
            for impl in impls:
                for option in hookspecs.UNHONOURED_OPTIONS:
                    if getattr(impl, option):
                        raise ValueError(
                            f"hook {hook!r}: {option} is not supported (hooks run per plugin)"
                        )

    def implementations(self, plugin: Any) -> Mapping[str, Sequence[pluggy.HookImpl]]:
        """The hooks ``plugin`` registered implementations of, each with those in calling
        order (empty when it is not registered)."""
        return self._impls.get(id(plugin), {})


def new_hook_manager(*added: ModuleType | type) -> HookManager:
    """A pluggy manager knowing the plugin system's hooks and those ``added`` (modules or
    classes of ``@hookspec`` functions), without plugins."""
    manager = HookManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    for specs in added:
        manager.add_hookspecs(specs)
    return manager
