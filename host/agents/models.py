"""The model protocol and the ``models`` service.

A model is one async call: a request (system prompt, messages, tool schemas) in, a response
(text, tool calls, stop reason, usage) out. A model that can stream also has ``stream``: the
same call as an async iterator of deltas (``TextDelta``, ``ToolCallDelta``) that ends with the
``ModelResponse``. Models are registered by name; ``resolve(None)`` gives the default model.
A model holding resources (connections) may define ``async aclose()``: the registry calls it
when the model is unregistered or the host closes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol, runtime_checkable

import attrs

from host.cancel import CancelSignal
from host.disposal import Disposer
from host.errors import HostError
from host.naming import NamedRegistry
from host.sessions.model import MessageEvent, ToolCall
from host.tools.tool import ToolProgress

log = logging.getLogger(__name__)


@attrs.frozen
class ToolSpec:
    """A tool as the model sees it: name, description and the JSON Schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


@attrs.frozen
class Usage:
    """Tokens a model call consumed."""

    input_tokens: int = 0
    output_tokens: int = 0


@attrs.frozen
class ModelRequest:
    """One model call: who asks (``agent_id``, ``label``), the prompt, the messages, the tools.

    ``max_tokens``, when set, bounds this call's answer (a model applies the smaller of it and
    its own configured limit).
    """

    agent_id: str
    label: str | None
    system_prompt: str
    messages: tuple[MessageEvent, ...]
    tools: tuple[ToolSpec, ...] = ()
    max_tokens: int | None = None

    def last_user_message(self) -> MessageEvent | None:
        """The most recent user-role message, or None."""
        for message in reversed(self.messages):
            if message.role == "user":
                return message
        return None


@attrs.frozen
class ModelResponse:
    """The model's answer: text, the tool calls it asks for, why it stopped, token usage.

    ``stop_reason`` is the provider's word (``"end_turn"``, ``"tool_use"``, …); the driver only
    looks at whether ``tool_calls`` is empty.
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    stop_reason: str = "end_turn"
    usage: Usage = Usage()


@runtime_checkable
class Model(Protocol):
    """A language model: ``complete`` answers one request; it may be cancelled at any await."""

    async def complete(self, request: ModelRequest, *, signal: CancelSignal) -> ModelResponse:
        """Answer ``request``; raise on failure (the turn then ends with ``error``)."""
        ...


@attrs.frozen
class TextDelta:
    """A piece of the answer's text, in order."""

    text: str


@attrs.frozen
class ToolCallDelta:
    """A piece of tool call number ``index`` of the answer: its first delta carries ``id`` and
    ``name``; ``arguments`` pieces concatenate to the call's JSON arguments."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


ModelDelta = TextDelta | ToolCallDelta
StreamEvent = TextDelta | ToolCallDelta | ModelResponse | ToolProgress
"""What ``StreamingModel.stream`` yields: deltas, then exactly one ``ModelResponse``, last;
an agent's stream listeners also see its tool calls' ``ToolProgress`` (never a model's)."""


@runtime_checkable
class StreamingModel(Model, Protocol):
    """A model that can also hand out its answer while it is generated."""

    def stream(self, request: ModelRequest, *, signal: CancelSignal) -> AsyncIterator[StreamEvent]:
        """Deltas as they arrive, then the complete ``ModelResponse`` (the same one
        ``complete`` would return). Closing the iterator early abandons the call."""
        ...


def streams(model: Model) -> bool:
    """True if ``model`` offers ``stream`` (and has not switched it off with ``streaming``).

    Asked on every model call, so it looks the method up instead of an ``isinstance`` check
    against the runtime-checkable protocol (which inspects every protocol member each time).
    """
    return (
        callable(getattr(model, "stream", None)) and getattr(model, "streaming", True) is not False
    )


ModelFactory = Callable[[], Model]


class ModelError(HostError):
    """A model name that resolves to nothing (code ``UNKNOWN_MODEL`` or ``NO_MODEL``)."""


class _Entry:
    """A registered model, built lazily from its factory the first time it is resolved."""

    def __init__(self, source: Model | ModelFactory) -> None:
        self._source = source
        is_model = isinstance(source, Model) and not isinstance(source, type)
        self._model: Model | None = source if is_model else None  # type: ignore[assignment]

    def built(self) -> Model | None:
        """The model, if it was built (or given) already."""
        return self._model

    def model(self) -> Model:
        if self._model is None:
            built = self._source()  # type: ignore[operator]
            if not isinstance(built, Model):
                raise TypeError(f"model factory returned {built!r}, which has no complete()")
            self._model = built
        return self._model


class ModelRegistry:
    """The ``models`` service: ``name -> model``.

    The default is the named ``default`` when registered; else the first registered model
    that is not the ``fallback`` (so configuring a real model makes it the default); else the
    first registered. ``register`` takes a model object or a zero-argument factory (called
    once, on first resolve) and returns the disposer that removes it.
    """

    def __init__(self, default: str | None = None, *, fallback: str | None = None) -> None:
        self._entries = NamedRegistry[_Entry]("model")
        self._default = default
        self._fallback = fallback

    def register(
        self, name: str, model: Model | ModelFactory, *, owner: str = "host", default: bool = False
    ) -> Disposer:
        """Add a model under ``name``; ``default=True`` makes it the default. Duplicates raise."""
        entry = _Entry(model)
        unregister = self._entries.register(name, entry, owner=owner)
        if default:
            self._default = name

        def dispose() -> None:
            unregister()
            _close_soon(entry.built())

        return dispose

    @property
    def default_name(self) -> str | None:
        """The name ``resolve(None)`` uses (see the class docstring)."""
        if self._default is not None and self._default in self._entries:
            return self._default
        names = list(self._entries)
        preferred = [name for name in names if name != self._fallback] or names
        return preferred[0] if preferred else None

    def names(self) -> list[str]:
        """Registered model names in registration order."""
        return list(self._entries)

    def resolve(self, name: str | None = None) -> Model:
        """The model called ``name`` (None: the default); a clear ``ModelError`` otherwise."""
        if name is None:
            chosen = self.default_name
            if chosen is None:
                raise ModelError("NO_MODEL", "no model is registered")
            name = chosen
        entry = self._entries.get(name)
        if entry is None:
            known = ", ".join(self._entries) or "none"
            raise ModelError("UNKNOWN_MODEL", f'model "{name}" is not registered (known: {known})')
        return entry.model()

    async def aclose(self) -> None:
        """Close every built model that holds resources (the host calls this when it closes)."""
        for name in list(self._entries):
            entry = self._entries.get(name)
            close = getattr(entry.built() if entry else None, "aclose", None)
            if close is not None:
                try:
                    await close()
                except Exception:
                    log.exception("closing model %s failed", name)


_closing: set[asyncio.Task[None]] = set()
"""Closes scheduled by unregistration, kept referenced until they finish."""


def _close_soon(model: Model | None) -> None:
    """Schedule ``model.aclose()`` on the running loop (a model unregistered without a running
    loop has no live connections of that loop to close)."""
    close = getattr(model, "aclose", None)
    if close is None:
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    task = loop.create_task(close())
    _closing.add(task)
    task.add_done_callback(_closing.discard)
