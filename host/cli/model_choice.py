"""Which model the command line's agents use, and refusing to guess when configuration broke.

A plugin that registers models (implements ``register_models``) and failed would otherwise
leave the keyless scripted model as the default without a word; the commands that call a
model refuse to start instead. ``SCRIPTED_DEFAULT`` is the configuration override that makes
the scripted model the default whatever is configured (``demo``, ``--script``).
"""

from __future__ import annotations

from host.app import Host
from host.errors import ConfigError

SCRIPTED_DEFAULT = {"models": {"default": "scripted"}}
"""``open_host(overrides=…)`` for a host whose agents use the scripted model by default."""


def failed_model_plugins(host: Host) -> list[str]:
    """``plugin NAME failed: ERROR`` for each failed plugin that registers models."""
    return [
        f"plugin {record.name} failed: {record.error}"
        for record in host.plugins.records.values()
        if record.state == "failed" and "register_models" in record.hooks
    ]


def refuse_failed_model_plugins(host: Host) -> None:
    """Raise a one-line ``ConfigError`` naming the first failed plugin that registers models."""
    failures = failed_model_plugins(host)
    if failures:
        raise ConfigError(failures[0])
