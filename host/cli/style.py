"""Terminal colour, on only for a terminal and never when ``NO_COLOR`` is set."""

from __future__ import annotations

import os
import sys
from typing import TextIO

_CODES = {
    "bold": "1",
    "dim": "2",
    "red": "31",
    "green": "32",
    "yellow": "33",
    "blue": "34",
    "magenta": "35",
    "cyan": "36",
}


class Style:
    """Wraps text in ANSI codes when enabled; a disabled style returns text unchanged."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    @classmethod
    def for_stream(cls, stream: TextIO = sys.stdout) -> Style:
        """Colour for a terminal stream unless ``NO_COLOR`` is set."""
        return cls(stream.isatty() and "NO_COLOR" not in os.environ)

    def __call__(self, text: str, *names: str) -> str:
        if not self.enabled or not names:
            return text
        codes = ";".join(_CODES[name] for name in names)
        return f"\033[{codes}m{text}\033[0m"
