"""agent-host: a minimal agent host whose tools come from installable plugin distributions.

``hookimpl`` marks a plugin's hook implementations; the typed author API (``ServiceContext``,
``RegisterTool``, … from ``host.api``) is importable from here too, loaded on first use so that
``import host`` stays cheap; ``lazy_attributes`` (``host.lazy``) gives a plugin package the same
first-use imports.
"""

from typing import TYPE_CHECKING

from host.lazy import lazy_attributes
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

__all__ = ["__version__", "hookimpl", "lazy_attributes"]

__getattr__ = lazy_attributes(__name__, exports_of="host.api")
