"""Per-plugin configuration: ``[plugins.<name>]`` tables of ``agent-host.toml``.

A plugin declares an attrs ``Config`` class; its table is validated strictly (no coercion of
``"5"`` into 5, no unknown keys) and structured with the host's cattrs converter, defaults
applied. A bad value is one line naming the plugin, the key and the expected type. Without a
table (or with an empty one) the defaults are the whole configuration: ``Config()`` is what
structuring would build, so the converter is not involved.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from host.errors import ConfigError
from host.project_files import FileRefused, read_regular
from host.schema import schema_for, validate

CONFIG_FILE = "agent-host.toml"
CONFIG_BYTES = 1024 * 1024
"""The largest ``agent-host.toml`` read (the project's, the user's, ``--config``)."""


def read_config_file(
    path: Path | None, *, explicit: bool, refused: list[str] | None = None
) -> dict[str, Any]:
    """The parsed TOML at ``path``; a missing default file is an empty config.

    A file the user named (``explicit``: ``--config``) is read whatever it is, a pipe such as
    ``--config <(…)`` included, up to ``CONFIG_BYTES``. Any other is read as
    ``host.project_files`` reads a project's files: a regular file of at most ``CONFIG_BYTES``.
    One that is refused is a ``ConfigError`` — or, when ``refused`` is given (the project's own
    file), a line added to it, and an empty config: only the project's settings are skipped,
    never the user's.
    """
    try:
        if path is None:
            data = None
        elif explicit:
            data = _read_named(path)
        else:
            data = read_regular(path, CONFIG_BYTES)
    except FileRefused as error:
        if refused is None:
            raise ConfigError(f"cannot read config file {error}") from None
        refused.append(f"config file {error}; its settings are ignored")
        return {}
    if data is None:
        if explicit:
            raise ConfigError(f"config file {path} does not exist")
        return {}
    import tomllib  # only when there is a file to read: it is not free at start-up

    try:
        parsed = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"cannot read config file {path}: {error}") from None
    plugins = parsed.get("plugins", {})
    if not isinstance(plugins, dict) or not all(isinstance(v, dict) for v in plugins.values()):
        raise ConfigError(f"{path}: [plugins] must hold one table per plugin")
    return parsed


def _read_named(path: Path) -> bytes | None:
    """Up to ``CONFIG_BYTES`` of the file the user named, whatever kind of file it is; None
    when there is none; ``FileRefused`` when it cannot be read or is larger."""
    try:
        with open(path, "rb") as file:
            data = file.read(CONFIG_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise FileRefused.unreadable(path, error) from None
    if len(data) > CONFIG_BYTES:
        raise FileRefused.too_large(path, CONFIG_BYTES)
    return data


def plugin_tables(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The ``[plugins.<name>]`` tables of a parsed config."""
    tables: dict[str, dict[str, Any]] = data.get("plugins", {})
    return tables


def structure_config(plugin: str, config_cls: type | None, table: dict[str, Any] | None) -> Any:
    """The plugin's ``Config`` instance from its table (None without a ``Config`` class)."""
    if config_cls is None:
        if table:
            key = next(iter(table))
            raise ConfigError(f"[plugins.{plugin}] {key}: this plugin takes no configuration")
        return None
    values = table or {}
    problems = validate(schema_for(config_cls), values)
    if problems:
        raise ConfigError(f"[plugins.{plugin}] {problems[0]}")
    try:
        if not values:
            return config_cls()
        from host.serialization import converter  # cattrs' JSON converter: only for a table

        return converter.structure(values, config_cls)
    except Exception as error:  # a validator on the Config class rejected a value
        raise ConfigError(f"[plugins.{plugin}] {_innermost(error)}") from None


def _innermost(error: BaseException) -> str:
    """The message of the first leaf error (cattrs wraps validator errors in groups)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return str(error)
