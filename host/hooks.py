"""The host's registration table: what each hook a plugin implements adds to this host.

The plugin system (``host.plugins.registrations``) brings the entries of ``register_services``,
``activate`` and ``register_plugins``; the host adds those that fill its own registries —
models (the ``models`` service, which the hook therefore requires), prompt sections, profiles
(``host.profiles.hookspecs``) and tools. ``hook_table`` is the whole table, in activation order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from host.naming import DuplicateNameError, NamedRegistry, Owner
from host.plugins.registrations import (
    ACTIVATE,
    PLUGINS,
    SERVICES,
    HookEntry,
    Registrant,
    Staged,
)
from host.profiles.hookspecs import profile_entry
from host.tools.tool import Tool

if TYPE_CHECKING:
    from host.agents.prompt import PromptSection
    from host.profiles.library import ProfileLibrary

MODELS_SERVICE = "models"
"""The service ``register_models`` adds to (a ``host.agents.models.ModelRegistry``)."""


def hook_table(
    tools: NamedRegistry[Tool],
    sections: NamedRegistry[PromptSection],
    profiles: ProfileLibrary,
) -> tuple[HookEntry, ...]:
    """Every hook the host calls on activation, in order, adding to these registries."""
    return (
        SERVICES,
        HookEntry("register_models", _register_model, _check_model, requires=MODELS_SERVICE),
        _sections_entry(sections),
        profile_entry(profiles),
        _tools_entry(tools),
        ACTIVATE,
        PLUGINS,
    )


def _register_model(registrant: Registrant, name: str, model: Any) -> None:
    models = registrant.lifecycle.services.get(MODELS_SERVICE)
    registrant.scope.add(models.register(name, model))
    registrant.record.added["register_models"].append(name)


def _check_model(stage: Staged, name: str, model: Any) -> None:
    models = stage.lifecycle.services.find(MODELS_SERVICE)
    taken = set(models.names()) - set(stage.record.models) if models is not None else set()
    claimed = stage.claimed("model")
    if name in claimed or name in taken:
        raise DuplicateNameError("model", name, Owner(stage.record.name), "another plugin")
    claimed.add(name)


def _section(name: str, text: str, order: int) -> PromptSection:
    """The section a ``register_prompt_sections`` call adds (its module loads with the first)."""
    from host.agents.prompt import PromptSection

    return PromptSection(name, text, order)


def _sections_entry(sections: NamedRegistry[PromptSection]) -> HookEntry:
    def register_section(registrant: Registrant, name: str, text: str, order: int = 0) -> None:
        section = _section(name, text, order)
        owner = Owner(registrant.record.name)
        registrant.scope.add(sections.register(name, section, owner=owner))

    def check_section(stage: Staged, name: str, text: str, order: int = 0) -> None:
        _section(name, text, order)
        stage.claim(sections, name)

    return HookEntry("register_prompt_sections", register_section, check_section)


def _declared(tool: Any) -> Tool:
    """``tool``, checked as the host registers it: a ``Tool`` whose arguments have a schema."""
    if not isinstance(tool, Tool):
        raise TypeError(f"register_tools expects host.tools.Tool, got {tool!r}")
    tool.declare()  # a function tool with no schema is refused here, by name
    return tool


def _tools_entry(tools: NamedRegistry[Tool]) -> HookEntry:
    def register_tool(registrant: Registrant, tool: Tool) -> Callable[[], None]:
        record, scope = registrant.record, registrant.scope
        if scope.disposed and isinstance(tool, Tool):  # a late call adds nothing
            raise RuntimeError(f"{Owner(record.name)} is no longer active: {tool.name} not added")
        unregister = tools.register(_declared(tool).name, tool, owner=Owner(record.name))
        added = record.added["register_tools"]
        added.append(tool.name)

        def dispose() -> None:  # a plugin may take one tool back early
            # only while this registration stands: a later activation's tool of the
            # same name (after a reload) is not this one's to forget
            if unregister() and tool.name in added:
                added.remove(tool.name)

        scope.add(dispose)
        return dispose

    def check_tool(stage: Staged, tool: Tool) -> None:
        stage.claim(tools, _declared(tool).name)

    return HookEntry("register_tools", register_tool, check_tool)
