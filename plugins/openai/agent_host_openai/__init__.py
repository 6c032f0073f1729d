"""The ``openai`` plugin: a model from any OpenAI-compatible chat-completions server.

Configuration is ``[plugins.openai]`` (see ``Config``) overlaid by the environment:
``OPENAI_BASE_URL`` (server, e.g. ``http://127.0.0.1:8080/v1``), ``AGENT_HOST_MODEL`` (model
id) and the API key from the variable named by ``api_key_env`` (``OPENAI_API_KEY``). A set,
non-empty variable wins over the file. When no base URL or no model id can be determined the
plugin stays active but registers no model, so keyless runs keep the scripted model.
``[plugins.openai.models.<name>]`` tables register more models (``Config.entries``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import attrs

from host import hookimpl
from host.api import ConfigError

if TYPE_CHECKING:
    from agent_host_openai.convert import MALFORMED_ARGUMENTS_KEY
    from agent_host_openai.failures import OpenAIModelError
    from agent_host_openai.model import OpenAIModel
    from agent_host_openai.settings import Settings
    from host.api import RegisterModel

_LAZY = {
    "OpenAIModel": "agent_host_openai.model",
    "OpenAIModelError": "agent_host_openai.failures",
    "MALFORMED_ARGUMENTS_KEY": "agent_host_openai.convert",
    "Settings": "agent_host_openai.settings",
}


def __getattr__(name: str) -> Any:
    """The model (with httpx), the converter and the resolved settings load on first use, not
    at plugin load (without a configured server there are no settings)."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_MAX_TOKENS",
    "MALFORMED_ARGUMENTS_KEY",
    "Config",
    "OpenAIModel",
    "OpenAIModelError",
    "Settings",
    "register_models",
    "resolve_settings",
]

log = logging.getLogger(__name__)

requires = ("models",)

DEFAULT_MAX_TOKENS = 4096
"""The answer length asked for unless configured: a bound on how long an abandoned request can
keep a server generating."""

TEXT_TOOL_CALLS = ("off", "json")
"""The values of ``text_tool_calls``."""

BASE_URL_ENV = "OPENAI_BASE_URL"
MODEL_ENV = "AGENT_HOST_MODEL"


@attrs.frozen
class Config:
    """``[plugins.openai]`` in agent-host.toml. The API key is never read from this file."""

    base_url: str | None = attrs.field(
        default=None,
        metadata={"description": "Server URL up to /chat/completions, e.g. http://host:8080/v1."},
    )
    model: str | None = attrs.field(
        default=None, metadata={"description": "The model id sent with every request."}
    )
    api_key_env: str | None = attrs.field(
        default="OPENAI_API_KEY",
        metadata={
            "description": "The environment variable holding the API key (a models table "
            "with its own base_url sends no key unless it sets this)."
        },
    )
    timeout: float = attrs.field(default=60.0, metadata={"description": "Seconds per HTTP phase."})
    max_retries: int = attrs.field(
        default=3,
        metadata={"description": "Retries after connection errors, timeouts, 429 and 5xx."},
    )
    max_tokens: int = attrs.field(
        default=DEFAULT_MAX_TOKENS,
        metadata={"description": "The longest answer asked for, in tokens (0: no limit sent)."},
    )
    stream: bool = attrs.field(
        default=True,
        metadata={"description": "Stream answers (false for servers without server-sent events)."},
    )
    stream_tools: bool = attrs.field(
        default=True,
        metadata={
            "description": "Stream requests that offer tools (false for servers that cannot)."
        },
    )
    retry_read_timeouts: bool = attrs.field(
        default=False,
        metadata={"description": "Retry a request whose answer timed out (it may still run)."},
    )
    text_tool_calls: str = attrs.field(
        default="off",
        metadata={
            "description": 'Read an answer that is only tool calls written as JSON text as '
            'those calls ("json"; "off": it stays text). For local models.'
        },
    )
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

        inherited = {
            field.name: getattr(self, field.name)
            for field in attrs.fields(Config)
            if field.name not in ("name", "models")
        }
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
                f'text_tool_calls: must be "off" or "json", got {self.text_tool_calls!r}',
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
    where it came from. For a ``[plugins.openai.models.<name>]`` ``table`` only the API key
    comes from the environment (from its ``api_key_env``).
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
    from agent_host_openai.settings import Settings

    return Settings(
        name=config.name,
        base_url=base_url,
        model=model,
        api_key=_env(environ, config.api_key_env) if config.api_key_env else None,
        api_key_env=config.api_key_env,
        timeout=config.timeout,
        max_retries=config.max_retries,
        max_tokens=config.max_tokens or None,
        stream=config.stream,
        stream_tools=config.stream_tools,
        retry_read_timeouts=config.retry_read_timeouts,
        text_tool_calls=config.text_tool_calls == "json",
    )


@hookimpl
def register_models(register: RegisterModel, config: Config | None) -> None:
    """Register the configured model as ``config.name`` and each ``[plugins.openai.models.
    <name>]`` as its name; nothing for one that is not configured."""
    config = config or Config()
    found = [resolve_settings(config, os.environ)]
    for name, entry in config.entries():
        found.append(resolve_settings(entry, os.environ, table=f"[plugins.openai.models.{name}]"))
    for settings in found:
        if settings is not None:
            register(settings.name, settings.build)  # a factory: built on first use
