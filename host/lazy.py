"""Module attributes imported on first use, so that importing a package stays cheap.

Once imported, a name is kept on the module, so later reads are plain attribute reads (the
hooks and tools that read ``host.api`` names do so on every call).

A package that re-exports names from heavier modules gives itself a module ``__getattr__``
(PEP 562) made here, and lists the same names under ``if TYPE_CHECKING:`` for type checkers::

    __getattr__ = lazy_attributes(__name__, {"Agent": "host.agents.agent"})

``host`` re-exports every name of ``host.api.__all__`` this way (``exports_of``), without
listing them twice.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_attributes(
    module: str,
    sources: Mapping[str, str] | None = None,
    *,
    exports_of: str | None = None,
    modules: Mapping[str, str] | None = None,
) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``module``: a name in ``sources`` is imported from the module
    it maps to, one in ``exports_of``'s ``__all__`` from that module, one in ``modules`` is the
    module it maps to, whole — each when first asked for, then kept on ``module``; any other
    name is an ``AttributeError``, as for a plain module."""
    table = dict(sources or {})
    whole = dict(modules or {})

    def __getattr__(name: str) -> Any:
        value = _resolve(name)
        owner = sys.modules.get(module)
        if owner is not None:
            setattr(owner, name, value)  # read directly from now on
        return value

    def _resolve(name: str) -> Any:
        if name in whole:
            return importlib.import_module(whole[name])
        source = table.get(name)
        if source is None and exports_of is not None and _may_export(name, exports_of):
            exporter = importlib.import_module(exports_of)
            if name in getattr(exporter, "__all__", ()):
                source = exports_of
        if source is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        return getattr(importlib.import_module(source), name)

    return __getattr__


def _may_export(name: str, exporter: str) -> bool:
    """Whether ``name`` may be looked up in ``exporter``: not a dunder name (which the import
    system probes) nor the exporter's own name (a submodule being imported)."""
    return not name.startswith("__") and name != exporter.rpartition(".")[2]
