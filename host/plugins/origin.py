"""Where in a plugin's own code an error came from: `` (notes/__init__.py:42 in register_tools)``.

A plugin's failure is one line; the file and line of the plugin's code that raised (or that
called what raised: a library, a C extension, the host's ``register``) end it, so an author
sees the cause without ``--debug``. The plugin's code is its top-level package or module (a
built-in's own module); the innermost frame of the traceback inside it is the one named, by
its path from the package's parent folder. Code with no file (generated, ``exec``'d) and a
traceback that never enters the plugin's code name nothing.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import traceback
from types import ModuleType
from typing import Any


def module_of(obj: Any) -> str | None:
    """The module a plugin object comes from (a module plugin's own name)."""
    if isinstance(obj, ModuleType):
        return obj.__name__
    module = getattr(type(obj), "__module__", None)
    return module if isinstance(module, str) else None


def origin(error: BaseException, module: str | None, *, whole: bool = False) -> str:
    """`` (PATH:LINE in FUNCTION)`` for the innermost frame of ``error``'s traceback inside the
    plugin code ``module`` belongs to (its top-level package, or ``module`` itself when
    ``whole``), or "" when there is none."""
    root = _root(module if whole else (module or "").split(".")[0])
    if root is None:
        return ""
    found: tuple[str, int, str] | None = None
    for frame, line in traceback.walk_tb(error.__traceback__):
        filename = frame.f_code.co_filename
        if filename == root or filename.startswith(root + os.sep):
            found = (filename, line, frame.f_code.co_name)
    if found is None:
        return ""
    path = os.path.relpath(found[0], os.path.dirname(root)).replace(os.sep, "/")
    return f" ({path}:{found[1]} in {found[2]})"


def _root(module: str | None) -> str | None:
    """The file of ``module``, or its folder when it is a package; None when unknown."""
    if not module:
        return None
    loaded = sys.modules.get(module)
    filename = getattr(loaded, "__file__", None)
    if filename is None and loaded is None:  # not imported (its import failed): find it
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            return None
        filename = spec.origin if spec is not None else None
    if not isinstance(filename, str) or not os.path.isabs(filename):
        return None
    return os.path.dirname(filename) if os.path.basename(filename) == "__init__.py" else filename
