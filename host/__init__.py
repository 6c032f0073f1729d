"""agent-host: a minimal agent host whose tools come from installable plugin distributions.

``hookimpl`` marks a plugin's hook implementations; the typed author API (``ServiceContext``,
``RegisterTool``, … from ``host.api``) is importable from here too, loaded on first use so that
``import host`` stays cheap.
"""

from typing import TYPE_CHECKING, Any

from host.plugins.hookspecs import hookimpl

if TYPE_CHECKING:
    from host.api import Disposer as Disposer
    from host.api import PluginHandle as PluginHandle
    from host.api import RegisterModel as RegisterModel
    from host.api import RegisterPlugin as RegisterPlugin
    from host.api import RegisterProfile as RegisterProfile
    from host.api import RegisterPromptSection as RegisterPromptSection
    from host.api import RegisterService as RegisterService
    from host.api import RegisterTool as RegisterTool
    from host.api import Scope as Scope
    from host.api import ServiceContext as ServiceContext

__version__ = "0.1.0"

__all__ = ["__version__", "hookimpl"]


def __getattr__(name: str) -> Any:
    """The author API names (``host.api.__all__``), imported from ``host.api`` when first
    asked for."""
    if not name.startswith("__") and name != "api":
        from importlib import import_module

        api = import_module("host.api")
        if name in api.__all__:
            return getattr(api, name)
    raise AttributeError(f"module 'host' has no attribute {name!r}")
