"""The model protocol and the ``models`` service.

A model is one async call: a request (system prompt, messages, tool schemas) in, a response
(text, tool calls, stop reason, usage) out. Models are registered by name; ``resolve(None)``
gives the default model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import attrs

from host.cancel import CancelSignal
from host.disposal import Disposer
from host.errors import HostError
from host.naming import NamedRegistry
from host.sessions.model import MessageEvent, ToolCall


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
    """One model call: who asks (``agent_id``, ``label``), the prompt, the messages, the tools."""

    agent_id: str
    label: str | None
    system_prompt: str
    messages: tuple[MessageEvent, ...]
    tools: tuple[ToolSpec, ...] = ()

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


ModelFactory = Callable[[], Model]


class ModelError(HostError):
    """A model name that resolves to nothing (code ``UNKNOWN_MODEL`` or ``NO_MODEL``)."""


class _Entry:
    """A registered model, built lazily from its factory the first time it is resolved."""

    def __init__(self, source: Model | ModelFactory) -> None:
        self._source = source
        is_model = isinstance(source, Model) and not isinstance(source, type)
        self._model: Model | None = source if is_model else None  # type: ignore[assignment]

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
        dispose = self._entries.register(name, _Entry(model), owner=owner)
        if default:
            self._default = name
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
