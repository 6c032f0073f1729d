"""The ``register`` callbacks handed to hooks: each records a disposer in the plugin's scope."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from host.disposal import Scope
from host.naming import NamedRegistry, plugin_owner
from host.plugins.record import PluginRecord
from host.services import Services
from host.tools.tool import Tool

if TYPE_CHECKING:
    from host.profiles.library import ProfileLibrary


class Registrars:
    """Builds, per plugin and hook, the callback that adds an item and remembers how to remove it.

    ``make_section(name, text, order)`` builds a prompt-section value for the global registry;
    ``profiles`` receives what ``register_profiles`` registers (named after the plugin).
    """

    def __init__(
        self,
        services: Services,
        tools: NamedRegistry[Tool],
        sections: NamedRegistry[Any],
        make_section: Callable[[str, str, int], Any],
        profiles: ProfileLibrary | None = None,
    ) -> None:
        self.services = services
        self.profiles = profiles
        self.tools = tools
        self.sections = sections
        self.make_section = make_section

    def for_hook(self, hook: str, record: PluginRecord, scope: Scope) -> Callable[..., Any] | None:
        """The ``register`` callback for ``hook``, or None for hooks without one."""
        owner = plugin_owner(record.name)
        if hook == "register_services":

            def register_service(name: str, service: Any) -> None:
                builtin = record.candidate.builtin
                if not builtin and self.services.displaces_default(name):
                    record.displaced.append(name)
                scope.add(self.services.register(name, service, owner=record.name, default=builtin))
                record.services.append(name)

            return register_service
        if hook == "register_tools":

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
        if hook == "register_profiles" and self.profiles is not None:
            profiles = self.profiles

            def register_profile(source: Any) -> None:
                scope.add(profiles.register(record.name, source))

            return register_profile
        return None
