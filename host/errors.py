"""The one shape every service error takes: an exception with a stable ``code``."""

from __future__ import annotations


class HostError(Exception):
    """Base of every error the host raises on purpose: a stable ``code`` and a message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code!r}, {self.message!r})"


class ConfigError(HostError):
    """Bad configuration: the message is one line naming what is wrong and where."""

    def __init__(self, message: str) -> None:
        super().__init__("CONFIG", message)
