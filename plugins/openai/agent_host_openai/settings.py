"""The resolved settings of the model the ``openai`` plugin registers.

Imported once a server and a model id are known (``resolve_settings``), not at plugin load.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from agent_host_openai.model import OpenAIModel


@attrs.frozen
class Settings:
    """The resolved configuration of the one model this plugin registers."""

    name: str
    base_url: str
    model: str
    api_key: str | None
    api_key_env: str | None
    timeout: float
    max_retries: int
    max_tokens: int | None
    stream: bool
    stream_tools: bool
    retry_read_timeouts: bool
    text_tool_calls: bool = False

    def build(self) -> OpenAIModel:
        """The model these settings describe (httpx is imported here, on first use)."""
        from agent_host_openai.model import OpenAIModel

        return OpenAIModel(
            base_url=self.base_url,
            model=self.model,
            api_key=self.api_key,
            api_key_env=self.api_key_env,
            timeout=self.timeout,
            max_retries=self.max_retries,
            max_tokens=self.max_tokens,
            stream=self.stream,
            stream_tools=self.stream_tools,
            retry_read_timeouts=self.retry_read_timeouts,
            text_tool_calls=self.text_tool_calls,
        )
