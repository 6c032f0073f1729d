"""A real OpenAI-compatible HTTP server on loopback for tests: scripted replies, recorded requests.

Shipped with the plugin so deployments and plugin authors can test against it keylessly. Like a
real server it refuses malformed chat-completions bodies (``validate_chat``), keeps connections
alive (``FakeServer.connections`` counts them) and can stream server-sent events (``Stream``,
built with ``stream_chunks``). Replies can be what local servers really send: calls written as
text (``text_call``), arguments with literal newlines inside strings (``tool_call`` takes the
raw string), an answer cut at ``max_tokens`` (``finish_reason="length"``).
"""

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

__all__ = [
    "ENV_VARS",
    "REJECT_STATUS",
    "FakeServer",
    "Recorded",
    "Reply",
    "Sleeps",
    "Stream",
    "completion",
    "rejection_body",
    "sse",
    "stream_chunks",
    "text_call",
    "text_tokens",
    "tool_call",
    "validate_chat",
]
