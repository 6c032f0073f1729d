"""Per-plugin configuration from agent-host.toml: structured, strict, one-line errors."""

from __future__ import annotations

import importlib

import attrs
import pytest

from host import hookimpl
from host.app import Host
from host.errors import ConfigError
from host.plugins.config import read_config_file
from host.plugins.discovery import from_object
from host.settings import HostSettings
from tests.support import plugin_row


@attrs.frozen
class WeatherConfig:
    city: str = "Lisbon"
    days: int = 3
    metric: bool = True


class Weather:
    Config = WeatherConfig
    seen: list[WeatherConfig] = []

    @staticmethod
    @hookimpl
    def activate(config):
        Weather.seen.append(config)


def start(tmp_path, config):
    Weather.seen.clear()
    host = Host(HostSettings(data_dir=tmp_path), config=config)
    host.add_plugins([from_object("weather", Weather)])
    return host.start()


def state(host):
    return plugin_row(host, "weather")


def test_defaults_apply_without_a_table(tmp_path):
    start(tmp_path, {})
    assert Weather.seen == [WeatherConfig()]


def test_table_is_structured_into_the_config_class(tmp_path):
    start(tmp_path, {"plugins": {"weather": {"city": "Porto", "days": 5}}})
    assert Weather.seen == [WeatherConfig(city="Porto", days=5)]


@pytest.mark.parametrize(
    ("table", "error"),
    [
        ({"days": "five"}, "ConfigError: [plugins.weather] days: expected integer, got string"),
        ({"metric": "no"}, "ConfigError: [plugins.weather] metric: expected boolean, got string"),
        ({"colour": "red"}, "ConfigError: [plugins.weather] colour: unknown key"),
    ],
)
def test_bad_values_fail_the_plugin_with_one_line(tmp_path, table, error):
    host = start(tmp_path, {"plugins": {"weather": table}})
    assert state(host)["state"] == "failed"
    assert state(host)["error"] == error
    assert Weather.seen == []


def test_config_for_a_plugin_without_config_class(tmp_path):
    class Plain:
        pass

    host = Host(HostSettings(data_dir=tmp_path), config={"plugins": {"plain": {"x": 1}}})
    host.add_plugins([from_object("plain", Plain)])
    host.start()
    row = host.plugin_rows()[-1]
    assert row["error"] == "ConfigError: [plugins.plain] x: this plugin takes no configuration"


def test_unreadable_config_file_is_one_clear_error(tmp_path):
    path = tmp_path / "agent-host.toml"
    path.write_text("[plugins\n")
    with pytest.raises(ConfigError, match=r"^cannot read config file .*agent-host.toml: "):
        read_config_file(path, explicit=True)
    path.write_text("plugins = 3\n")
    with pytest.raises(ConfigError, match=r"\[plugins\] must hold one table per plugin"):
        read_config_file(path, explicit=True)


def test_missing_explicit_config_is_an_error_but_missing_default_is_not(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        read_config_file(tmp_path / "nope.toml", explicit=True)
    assert read_config_file(tmp_path / "nope.toml", explicit=False) == {}


def test_a_config_class_validator_message_reaches_the_user(tmp_path):
    @attrs.frozen
    class Ranged:
        days: int = attrs.field(default=1, validator=attrs.validators.gt(0))

    class Forecast:
        Config = Ranged

    host = Host(HostSettings(data_dir=tmp_path), config={"plugins": {"forecast": {"days": 0}}})
    host.add_plugins([from_object("forecast", Forecast)])
    host.start()
    row = host.plugin_rows()[-1]
    assert row["state"] == "failed"
    assert row["error"] == "ConfigError: [plugins.forecast] 'days' must be > 0: 0"


@pytest.mark.parametrize(
    "module",
    [
        "host.builtins.models",
        "host.builtins.session_persistence",
        "agent_host_example",
        "agent_host_openai",
        "agent_host_postgres",
        "agent_host_subagent",
        "tool_subagent_report.plugin",
    ],
)
def test_defaults_without_a_table_are_what_structuring_builds(module):
    from host.plugins.config import structure_config
    from host.serialization import converter

    config_cls = importlib.import_module(module).Config
    expected = converter.structure({}, config_cls)
    assert structure_config("p", config_cls, None) == expected
    assert structure_config("p", config_cls, {}) == expected
