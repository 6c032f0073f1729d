"""agent-host: a minimal agent host whose tools come from installable plugin distributions."""

from host.plugins.hookspecs import hookimpl

__version__ = "0.1.0"

__all__ = ["__version__", "hookimpl"]
