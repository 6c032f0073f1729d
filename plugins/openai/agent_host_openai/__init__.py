"""The ``openai`` plugin: a model from any OpenAI-compatible chat-completions server.

Configuration is ``[plugins.openai]`` (see ``Config``) overlaid by the environment:
``OPENAI_BASE_URL`` (server, e.g. ``http://127.0.0.1:8080/v1``), ``AGENT_HOST_MODEL`` (model
id) and the API key from the variable named by ``api_key_env`` (``OPENAI_API_KEY``). A set,
non-empty variable wins over the file. When no base URL or no model id can be determined the
plugin stays active but registers no model, so keyless runs keep the scripted model.
``[plugins.openai.models.<name>]`` tables register more models (``Config.entries``).
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import attrs

from agent_host_openai.settings import DEFAULT_MAX_TOKENS, TEXT_TOOL_CALLS, Settings
from host import hookimpl, lazy_attributes
from host.api import ConfigError

if TYPE_CHECKING:
    from agent_host_openai.convert import MALFORMED_ARGUMENTS_KEY
    from agent_host_openai.failures import OpenAIModelError
    from agent_host_openai.model import OpenAIModel
    from host.api import RegisterModel

__getattr__ = lazy_attributes(
    __name__,
    {
        "OpenAIModel": "agent_host_openai.model",
        "OpenAIModelError": "agent_host_openai.failures",
        "MALFORMED_ARGUMENTS_KEY": "agent_host_openai.convert",
    },
)
"""The model (with httpx) and the converter load on first use, not at plugin load."""

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "MALFORMED_ARGUMENTS_KEY",
    "TEXT_TOOL_CALLS",
    "Config",
    "OpenAIModel",
    "OpenAIModelError",
    "Settings",
    "register_models",
    "resolve_settings",
]

log = logging.getLogger(__name__)

requires = ("models",)

BASE_URL_ENV = "OPENAI_BASE_URL"
MODEL_ENV = "AGENT_HOST_MODEL"


@attrs.frozen
class Config(Settings):
    """``[plugins.openai]`` in agent-host.toml: the ``Settings`` of the model it registers, its
    name and more models. The API key is never read from this file."""

    name: str = attrs.field(
        default="openai",
        metadata={"description": "The name the model is registered under."},
    )
    models: dict[str, dict[str, Any]] = attrs.field(
        factory=dict,
        metadata={
            "description": "More models, one table per name ([plugins.openai.models.<name>]) "
            "with the keys above; a key it does not set is taken from [plugins.openai]."
        },
    )

    def entries(self) -> list[tuple[str, Config]]:
        """The ``[plugins.openai.models.<name>]`` tables as ``(name, Config)``, each with the
        keys it does not set taken from this table, but for ``api_key_env`` when it sets its
        own ``base_url`` (another server gets no key it was not given: None); a
        ``ConfigError`` naming the table for an unknown key, a bad value or a name already
        taken."""
        from host.api import structure_config

        inherited = attrs.asdict(_settings_of(self))
        found: list[tuple[str, Config]] = []
        for name, table in self.models.items():
            where = f"[plugins.openai.models.{name}]"
            if name == self.name or not name.strip():
                raise ConfigError(f"{where} the name {name!r} is taken or empty")
            unknown = sorted(set(table) - set(inherited))
            if unknown:
                raise ConfigError(f"{where} {unknown[0]}: unknown key")
            values = {**inherited, **table, "name": name}
            if "base_url" in table and "api_key_env" not in table:
                values["api_key_env"] = None
            entry: Config = structure_config(f"openai.models.{name}", Config, values)
            entry.check(where)
            found.append((name, entry))
        return found

    def check(self, where: str = "[plugins.openai]") -> None:
        """Raise a ``ConfigError`` naming the first out-of-range value."""
        modes = " or ".join(f'"{mode}"' for mode in TEXT_TOOL_CALLS)
        problems = [
            (self.timeout <= 0, f"timeout: must be greater than 0, got {self.timeout!r}"),
            (self.max_retries < 0, f"max_retries: must be 0 or more, got {self.max_retries!r}"),
            (self.max_tokens < 0, f"max_tokens: must be 0 or more, got {self.max_tokens!r}"),
            (not self.name.strip(), "name: must not be empty"),
            (
                self.api_key_env is not None and not self.api_key_env.strip(),
                "api_key_env: must not be empty",
            ),
            (
                self.text_tool_calls not in TEXT_TOOL_CALLS,
                f"text_tool_calls: must be {modes}, got {self.text_tool_calls!r}",
            ),
        ]
        for bad, problem in problems:
            if bad:
                raise ConfigError(f"{where} {problem}")


def _env(environ: Mapping[str, str], name: str) -> str | None:
    value = environ.get(name, "").strip()
    return value or None


def resolve_settings(
    config: Config, environ: Mapping[str, str], *, table: str = "[plugins.openai]"
) -> Settings | None:
    """``config`` overlaid by ``environ``; None when no base URL or no model id is known.

    An out-of-range value, or a base URL that is not http(s), is a ``ConfigError`` naming
    where it came from. A ``[plugins.openai.models.<name>]`` ``table`` is not overlaid (only
    its API key comes from the environment, read by ``register_models``).
    """
    config.check(table)
    overlay = table == "[plugins.openai]"
    base_url = (overlay and _env(environ, BASE_URL_ENV)) or config.base_url
    model = (overlay and _env(environ, MODEL_ENV)) or config.model
    if not base_url or not model:
        if base_url or model:
            missing = f"a model id ({MODEL_ENV})" if base_url else f"a base URL ({BASE_URL_ENV})"
            if not overlay:
                missing = f"{table}: " + ("a model id" if base_url else "a base URL")
            log.warning("openai plugin: no model registered: %s is missing", missing)
        return None
    from_env = overlay and _env(environ, BASE_URL_ENV)
    where = BASE_URL_ENV if from_env else f"{table} base_url"
    if not base_url.startswith(("http://", "https://")):
        raise ConfigError(f"{where}: {base_url!r} must start with http:// or https://")
    try:
        url = urlsplit(base_url)
        port = url.port
    except ValueError:
        raise ConfigError(f"{where}: {base_url!r} has an invalid port") from None
    if not url.hostname:
        raise ConfigError(f"{where}: {base_url!r} names no host")
    if port is not None and not 0 < port < 65536:
        raise ConfigError(f"{where}: {base_url!r} has an invalid port")
    return attrs.evolve(_settings_of(config), base_url=base_url, model=model)


def _settings_of(config: Config) -> Settings:
    """The ``Settings`` part of ``config`` (without its ``name`` and ``models``)."""
    return Settings(**{field.name: getattr(config, field.name) for field in attrs.fields(Settings)})


@hookimpl
def register_models(register: RegisterModel, config: Config | None) -> None:
    """Register the configured model as ``config.name`` and each ``[plugins.openai.models.
    <name>]`` as its name; nothing for one that is not configured."""
    config = config or Config()
    tables = [(config.name, config, "[plugins.openai]")]
    tables += [(name, entry, f"[plugins.openai.models.{name}]") for name, entry in config.entries()]
    for name, table, where in tables:
        settings = resolve_settings(table, os.environ, table=where)
        if settings is not None:
            key = _env(os.environ, settings.api_key_env) if settings.api_key_env else None
            register(name, functools.partial(_build, settings, key))  # built on first use


def _build(settings: Settings, api_key: str | None) -> OpenAIModel:
    """The model ``settings`` describe, sending ``api_key`` (httpx is imported here)."""
    from agent_host_openai.model import OpenAIModel

    return OpenAIModel(settings, api_key=api_key)
