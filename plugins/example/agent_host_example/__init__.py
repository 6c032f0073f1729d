"""A minimal plugin: the ``word_count`` tool, active while the ``sessions`` service exists."""

from __future__ import annotations

import attrs

from host.api import RegisterTool, hookimpl
from host.tools import Tool, ToolExec, ToolResult, tool

requires = ("sessions",)


@attrs.frozen
class Config:
    """``[plugins.word_count]`` in agent-host.toml."""

    max_words: int = 10_000


@attrs.frozen
class WordCountArgs:
    """Arguments of ``word_count``."""

    text: str = attrs.field(metadata={"description": "The text whose words to count."})


def make_tool(config: Config) -> Tool:
    """The ``word_count`` tool, limited by ``config.max_words``."""

    @tool("word_count", "Count the words in a text.", WordCountArgs, concurrency_safe=True)
    async def word_count(args: WordCountArgs, exec: ToolExec) -> ToolResult:
        count = len(args.text.split())
        if count > config.max_words:
            return ToolResult.error(f"text has more than {config.max_words} words")
        return ToolResult(f"{count} words", structured={"words": count})

    return word_count


@hookimpl
def register_tools(register: RegisterTool, config: Config) -> None:
    """Offer ``word_count`` to every agent."""
    register(make_tool(config))
