"""The ``register`` callbacks handed to hooks: each records a disposer in the plugin's scope.

The plugin system's own hooks are in ``host.plugins.hookspecs``; a layer above it that needs a
hook of its own (the host's profile library: ``register_profiles``) brings it as an
``AddedHook``: its pluggy spec, its place in the activation order and its ``register``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

import attrs

from host.disposal import Scope
from host.naming import NamedRegistry, Owner
from host.plugins import hookspecs
from host.plugins.record import PluginRecord
from host.services import Services

if TYPE_CHECKING:
    from host.tools.tool import Tool


@attrs.frozen
class AddedHook:
    """A hook that a layer above the plugin system adds (pluggy ``add_hookspecs``).

    ``specs`` (a module or class) holds the ``@hookspec`` function named ``name``; plugins'
    implementations of it are called just before those of ``before`` (a hook of
    ``hookspecs.ACTIVATION_ORDER``). ``registrar(plugin, scope)`` is the ``register`` callback
    for plugin ``plugin``, recording a disposer in ``scope`` for what it adds;
    ``check(plugin)`` is one that raises as that callback would and adds nothing (a hot reload
    checks the new version's registrations with it before the swap).
    """

    name: str
    specs: ModuleType | type
    before: str
    registrar: Callable[[str, Scope], Callable[..., Any]]
    check: Callable[[str], Callable[..., None]]


def activation_order(added: Iterable[AddedHook]) -> tuple[str, ...]:
    """``hookspecs.ACTIVATION_ORDER`` with each added hook just before its ``before``."""
    order = list(hookspecs.ACTIVATION_ORDER)
    for hook in added:
        order.insert(order.index(hook.before), hook.name)
    return tuple(order)


class Registrars:
    """Builds, per plugin and hook, the callback that adds an item and remembers how to remove it.

    ``make_section(name, text, order)`` builds a prompt-section value for the global registry;
    ``added`` are the hooks a layer above adds, with their own callbacks.
    """

    def __init__(
        self,
        services: Services,
        tools: NamedRegistry[Tool],
        sections: NamedRegistry[Any],
        make_section: Callable[[str, str, int], Any],
        added: Sequence[AddedHook] = (),
    ) -> None:
        self.services = services
        self.tools = tools
        self.sections = sections
        self.make_section = make_section
        self.added = {hook.name: hook for hook in added}

    def for_hook(self, hook: str, record: PluginRecord, scope: Scope) -> Callable[..., Any] | None:
        """The ``register`` callback for ``hook``, or None for hooks without one."""
        owner = Owner(record.name)
        if hook == "register_services":

            def register_service(name: str, service: Any) -> None:
                builtin = record.candidate.builtin
                if not builtin and self.services.displaces_default(name):
                    record.displaced.append(name)
                scope.add(self.services.register(name, service, owner=record.name, default=builtin))
                record.services.append(name)

            return register_service
        if hook == "register_tools":
            from host.tools.tool import Tool  # the tool hook's own: the plugin layer loads no tools

            def register_tool(tool: Tool) -> Callable[[], None]:
                if not isinstance(tool, Tool):
                    raise TypeError(f"register_tools expects host.tools.Tool, got {tool!r}")
                if scope.disposed:  # a late call after the plugin went away adds nothing
                    raise RuntimeError(f"{owner} is no longer active: {tool.name} not added")
                tool.declare()  # a function tool with no schema is refused here, by name
                unregister = self.tools.register(tool.name, tool, owner=owner)
                record.tools.append(tool.name)

                def dispose() -> None:  # a plugin may take one tool back early
                    # only while this registration stands: a later activation's tool of the
                    # same name (after a reload) is not this one's to forget
                    if unregister() and tool.name in record.tools:
                        record.tools.remove(tool.name)

                scope.add(dispose)
                return dispose

            return register_tool
        if hook == "register_models":

            def register_model(name: str, model: Any) -> None:
                scope.add(self.services.get("models").register(name, model))
                record.models.append(name)

            return register_model
        if hook == "register_prompt_sections":

            def register_section(name: str, text: str, order: int = 0) -> None:
                section = self.make_section(name, text, order)
                scope.add(self.sections.register(name, section, owner=owner))

            return register_section
        if hook in self.added:
            return self.added[hook].registrar(record.name, scope)
        return None
