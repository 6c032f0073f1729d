"""Which model the command line's agents use.

``SCRIPTED_DEFAULT`` is the configuration override that makes the scripted model the default
whatever is configured (``demo``).
"""

from __future__ import annotations

SCRIPTED_DEFAULT = {"models": {"default": "scripted"}}
"""``open_host(overrides=…)`` for a host whose agents use the scripted model by default."""
