"""The plugin system: hookspecs, discovery, selection, configuration and lifecycle."""

from host.plugins.hookspecs import hookimpl

__all__ = ["hookimpl"]
