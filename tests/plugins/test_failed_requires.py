"""A failed plugin's row keeps the ``requires`` it declared (``agent-host plugins``)."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

from host import hookimpl
from host.testing import build_host
from tests.support import plugin_row

NO_CONFIG_TAKEN = {"plugins": {"brittle": {"level": 1}}}


def brittle(requires: Any, *, models: bool = False) -> types.ModuleType:
    """A plugin module declaring ``requires`` (and ``register_models`` with ``models``)."""
    module = types.ModuleType("brittle_plugin")
    module.requires = requires  # type: ignore[attr-defined]
    if models:

        @hookimpl
        def register_models(register: Any) -> None:
            """Registers nothing."""

        module.register_models = register_models  # type: ignore[attr-defined]
    return module


def test_a_plugin_failing_on_its_configuration_keeps_its_declared_requires(tmp_path: Path):
    host = build_host(("brittle", brittle(("agents",))), data_dir=tmp_path, config=NO_CONFIG_TAKEN)
    row = plugin_row(host, "brittle")
    assert (row["state"], row["requires"]) == ("failed", ["agents"])
    assert (
        row["error"] == "ConfigError: [plugins.brittle] level: this plugin takes no configuration"
    )
    host.close()


def test_a_failed_plugin_that_registers_models_requires_models_as_when_active(tmp_path: Path):
    plugin = ("brittle", brittle(("agents",), models=True))
    failed = build_host(plugin, data_dir=tmp_path / "failed", config=NO_CONFIG_TAKEN)
    active = build_host(plugin, data_dir=tmp_path / "active")
    assert plugin_row(failed, "brittle")["requires"] == ["agents", "models"]
    assert plugin_row(active, "brittle")["requires"] == ["agents", "models"]
    failed.close()
    active.close()


def test_a_malformed_requires_fails_the_plugin_and_shows_none(tmp_path: Path):
    host = build_host(("brittle", brittle("agents")), data_dir=tmp_path)
    row = plugin_row(host, "brittle")
    assert (row["state"], row["requires"]) == ("failed", [])
    assert row["error"] == "TypeError: requires must be a tuple of service names"
    host.close()
