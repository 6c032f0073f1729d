"""A real OpenAI-compatible HTTP server on loopback for tests: scripted replies, recorded requests.

Shipped with the plugin so deployments and plugin authors can test against it keylessly. Like a
real server it refuses malformed chat-completions bodies (``validate_chat``), keeps connections
alive (``FakeServer.connections`` counts them) and can stream server-sent events (``Stream``,
built with ``stream_chunks``). Replies can be what local servers really send: calls written as
text (``text_call``), arguments with literal newlines inside strings (``tool_call`` takes the
raw string), an answer cut at ``max_tokens`` (``finish_reason="length"``). ``model_on`` builds
an ``OpenAIModel`` on such a server.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from agent_host_openai.settings import Settings
from agent_host_openai.testing.bodies import (
    completion,
    sse,
    stream_chunks,
    text_call,
    text_tokens,
    tool_call,
)
from agent_host_openai.testing.server import ENV_VARS, FakeServer, Recorded, Reply, Sleeps, Stream
from agent_host_openai.testing.strict import REJECT_STATUS, rejection_body, validate_chat

if TYPE_CHECKING:
    from agent_host_openai.endpoint import Sleep
    from agent_host_openai.model import OpenAIModel

__all__ = [
    "ENV_VARS",
    "REJECT_STATUS",
    "FakeServer",
    "Recorded",
    "Reply",
    "Sleeps",
    "Stream",
    "completion",
    "model_on",
    "rejection_body",
    "sse",
    "stream_chunks",
    "text_call",
    "text_tokens",
    "tool_call",
    "validate_chat",
]


def model_on(
    url: str,
    *,
    api_key: str | None = None,
    backoff_base: float = 0.001,
    sleep: Sleep = asyncio.sleep,
    **settings: Any,
) -> OpenAIModel:
    """An ``OpenAIModel`` on the server at ``url`` with the ``Settings`` given (model id
    ``test-model`` unless ``model`` is), retrying after 1 ms rather than half a second."""
    from agent_host_openai.model import OpenAIModel

    settings.setdefault("model", "test-model")
    return OpenAIModel(
        Settings(base_url=url, **settings), api_key=api_key, backoff_base=backoff_base, sleep=sleep
    )
