"""The settings of one model of the ``openai`` plugin, spelled once.

``Settings`` is what a ``[plugins.openai]`` table (``Config``, which adds the model's ``name``
and the ``models`` tables) or a ``[plugins.openai.models.<name>]`` table sets, and what
``OpenAIModel`` and its ``ChatEndpoint`` are built from. This module imports only attrs: the
plugin loads it at start-up, the model (with httpx) once a server is configured.
"""

from __future__ import annotations

import attrs

DEFAULT_MAX_TOKENS = 4096
"""The answer length asked for unless configured: a bound on how long an abandoned request can
keep a server generating."""

TEXT_TOOL_CALLS = ("off", "json")
"""The values of ``text_tool_calls``."""


@attrs.frozen
class Settings:
    """One OpenAI-compatible model: its server, id, key variable, timeouts and answer shape."""

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

