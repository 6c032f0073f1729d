"""A minimal plugin: the ``word_count`` tool, active while the ``sessions`` service exists."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from host import hookimpl
from host.tools import Tool, ToolResult, tool

if TYPE_CHECKING:  # the author API's types: for the type checker only
    from host.api import RegisterTool

requires = ("sessions",)


@attrs.frozen
class Config:
    """``[plugins.word_count]`` in agent-host.toml."""

    max_words: int = 10_000


def make_tool(config: Config) -> Tool:
    """The ``word_count`` tool, limited by ``config.max_words``."""

    @tool(concurrency_safe=True)
    async def word_count(text: str) -> ToolResult:
        """Count the words in a text.

        Args:
            text: The text whose words to count.
        """
        count = len(text.split())
        if count > config.max_words:
            return ToolResult.error(f"text has more than {config.max_words} words")
        return ToolResult(f"{count} words", structured={"words": count})

    return word_count


@hookimpl
def register_tools(register: RegisterTool, config: Config) -> None:
    """Offer ``word_count`` to every agent."""
    register(make_tool(config))
